import { getHeapStatistics, type HeapInfo } from 'node:v8';
import http from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import cluster from 'node:cluster';
import { AggregatorRegistry, Counter, Gauge, Histogram, type Registry, collectDefaultMetrics, register } from 'prom-client';
import type { Logger } from './log';
import { ReadGauge } from './read-gauge';
import { ReadMapGauge } from './read-map-gauge';
import { TalliedCounter } from './tallied-counter';
import { listenError } from './listen-error';
import type { Role } from './role';
import { within } from './within';

/**
 * Every process registers its metrics on prom-client's default registry. In
 * the all-in-one service the supervisor answers /metrics for all its child
 * processes, each sample labelled with its process (cluster-metrics.ts); a
 * role run on its own serves its own.
 */
let defaultsOn = false;
/** The default metrics, and this process's V8 heap by role. */
export function enableDefaultMetrics(role?: string): void {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ prefix: 'hermod_' });
  // Gauges that prom-client names as counters (promtool check metrics refuses a `_total`
  // gauge); the same counts stay by type in hermod_nodejs_active_handles and the like.
  for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) register.removeSingleMetric(`hermod_nodejs_${name}`);
  if (!role) return;
  const heap: [name: string, help: string, read: (h: HeapInfo) => number][] = [
    ['hermod_role_heap_used_bytes', 'V8 heap in use, by role', (h) => h.used_heap_size],
    [
      'hermod_role_heap_committed_bytes',
      'V8 heap committed (reserved in memory, used or not), by role: the part of RSS the heap holds',
      (h) => h.total_physical_size,
    ],
  ];
  for (const [name, help, read] of heap) {
    new Gauge({
      name,
      help,
      labelNames: ['role'] as const,
      collect() {
        this.set({ role }, read(getHeapStatistics()));
      },
    });
  }
}

/** Reports the history engine's tracked memory (chDB inside core, or a ClickHouse server) at each scrape, from `read`. */
export function watchHistoryEngineMemory(read: () => Promise<number>): void {
  if (register.getSingleMetric('hermod_history_engine_memory_bytes')) return;
  new Gauge({
    name: 'hermod_history_engine_memory_bytes',
    help: "Memory the history engine tracks as in use (ClickHouse MemoryTracking): chDB's, inside core, or a ClickHouse server's whole",
    // Within a second, or the last value: a slow engine must not hold up the scrape (the supervisor waits 4 s for core).
    async collect() {
      const bytes = await within(read(), 1000).catch(() => Number.NaN);
      if (Number.isFinite(bytes)) this.set(bytes);
    },
  });
}

/** This process's registries: the default one and, per worker thread with metrics of its own, one that asks that thread. */
const registries: Registry[] = [register];

/** Adds the metrics of another thread of this process (a registry whose getMetricsAsJSON asks it) to what this process serves. */
export function addThreadMetrics(registry: Registry): () => void {
  registries.push(registry);
  AggregatorRegistry.setRegistries(registries);
  return () => {
    registries.splice(registries.indexOf(registry), 1);
    AggregatorRegistry.setRegistries(registries);
  };
}

/**
 * Metrics without labels that only some roles make. Every process loads every
 * metric's definition, and one without labels always has a sample: elsewhere
 * it is a 0 that means nothing on a dashboard (a worker's
 * hermod_callbacks_owed), so a role run on its own serves only its own. Under
 * `hermod start` each process answers with its own role's, labelled with its process.
 */
const MADE_BY: Readonly<Record<string, readonly string[]>> = {
  hermod_callbacks_owed: ['core'],
  hermod_callbacks_owed_on_disk: ['core'],
  hermod_callbacks_unacknowledged: ['core'],
  hermod_campaigns_sending: ['core'],
  hermod_campaign_messages_total: ['core'],
  hermod_history_flush_failures_total: ['core'],
  // Whichever runs the SMS workers (`role:channel`): core when no worker runs on its own, else the SMS workers.
  hermod_smpp_receipt_latency_seconds: ['core:sms', 'worker:sms'],
  hermod_smsc_simulator_submits_total: ['smsc-simulator'],
};

/** What a process runs: its role and the channels whose workers it runs (a worker's, or every one in a core that runs them). */
export interface MetricsMaker {
  role: Role;
  channels: readonly string[];
}

/** Whether `maker` makes the metric named `name` (MADE_BY: a role, or `role:channel`); every other metric, any process. */
function makes(maker: MetricsMaker, name: string): boolean {
  const by = MADE_BY[name];
  if (!by) return true;
  return by.some((m) => {
    const [role, channel] = m.split(':');
    return role === maker.role && (channel === undefined || maker.channels.includes(channel));
  });
}

/** This process's metrics (`maker`'s own, when it is given), one list per registry (its threads' among them). */
async function metricsByRegistry(maker?: MetricsMaker) {
  return Promise.all(registries.map(async (r) => (await r.getMetricsAsJSON()).filter((m) => maker === undefined || makes(maker, m.name))));
}

/** Everything this process serves (`maker`'s own, when it is given), its threads' metrics included, in the exposition format. */
async function processMetrics(maker?: MetricsMaker): Promise<string> {
  if (registries.length === 1 && maker === undefined) return register.metrics();
  // One process's registries: what prom-client leaves out when it sums processes (their start times) is this one's.
  const ofOneProcess = (await metricsByRegistry(maker)).map((metrics) =>
    metrics.map((m) => (m.aggregator === 'omit' ? { ...m, aggregator: 'first' as const } : m)),
  );
  return AggregatorRegistry.aggregate(ofOneProcess).metrics();
}

/**
 * In a process of `hermod start`: answer the supervisor's requests for this process's metrics (cluster-metrics.ts),
 * `role`'s own, in prom-client's messages.
 */
export function answerClusterMetricRequests(maker: MetricsMaker): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: { type?: string; requestId?: unknown }) => {
    if (message?.type !== 'prom-client:getMetricsReq') return;
    const answer = (body: object): void =>
      void process.send?.({ type: 'prom-client:getMetricsRes', requestId: message.requestId, ...body }, undefined, {}, () => undefined);
    metricsByRegistry(maker).then(
      (metrics) => answer({ metrics }),
      (err: unknown) => answer({ error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

// Up to 30 s: a request held until a dependency times out (Redis, 5 s and more) is told apart from one of 5 s.
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

function once<T>(name: string, make: () => T): T {
  return (register.getSingleMetric(name) as T | undefined) ?? make();
}

export const httpRequests = once(
  'hermod_http_requests_total',
  () =>
    new TalliedCounter({
      name: 'hermod_http_requests_total',
      help: 'HTTP requests answered, by interface, route and status',
      labelNames: ['interface', 'route', 'method', 'status'] as const,
    }),
);

export const httpDuration = once(
  'hermod_http_request_duration_seconds',
  () =>
    new Histogram({
      name: 'hermod_http_request_duration_seconds',
      help: 'HTTP request latency, by interface, route and status',
      labelNames: ['interface', 'route', 'method', 'status'] as const,
      buckets: LATENCY_BUCKETS,
    }),
);

export const grpcDuration = once(
  'hermod_grpc_call_duration_seconds',
  () =>
    new Histogram({
      name: 'hermod_grpc_call_duration_seconds',
      help: 'gRPC call latency between gateway and core, by side, method and code',
      labelNames: ['side', 'method', 'code'] as const,
      buckets: LATENCY_BUCKETS,
    }),
);

export const messagesByStatus = once(
  'hermod_core_messages_total',
  () =>
    new TalliedCounter({
      name: 'hermod_core_messages_total',
      help: 'Messages that reached each status, by channel',
      labelNames: ['channel', 'status'] as const,
    }),
);

export const busLag = once(
  'hermod_bus_lag_records',
  () =>
    new Gauge({
      name: 'hermod_bus_lag_records',
      help: 'Records of a topic that a consumer group has not acknowledged yet',
      labelNames: ['topic', 'group'] as const,
    }),
);

export const busBatchesFailed = once(
  'hermod_bus_batches_failed_total',
  () =>
    new Counter({
      name: 'hermod_bus_batches_failed_total',
      help: 'Batches of a topic whose consumer group handler failed; each is handed again until it is handled, the records behind it in its partition waiting',
      labelNames: ['topic', 'group'] as const,
    }),
);

export const busLagUnread = once(
  'hermod_bus_lag_unread_seconds',
  () =>
    new Gauge({
      name: 'hermod_bus_lag_unread_seconds',
      help: 'Seconds since the lag of a consumer group was last read (0 while reads work); hermod_bus_lag_records has no value meanwhile',
      labelNames: ['topic', 'group'] as const,
    }),
);

export const callbacksTotal = once(
  'hermod_callbacks_total',
  () =>
    new TalliedCounter({
      name: 'hermod_callbacks_total',
      help: 'Customer callbacks by application, kind and outcome (delivered, retry, refused, given_up, not_configured)',
      labelNames: ['application', 'kind', 'outcome'] as const,
    }),
);

export const callbacksAwaitingRetry = once(
  'hermod_callbacks_awaiting_retry',
  () =>
    new Gauge({
      name: 'hermod_callbacks_awaiting_retry',
      help: "Callbacks of an application that failed and wait in core's memory for a retry (their receiver is failing); those not tried yet behind them, and those moved to disk, are in hermod_callbacks_owed_per_application",
      labelNames: ['application'] as const,
    }),
);

export const callbacksOwed = once(
  'hermod_callbacks_owed',
  () =>
    new Gauge({
      name: 'hermod_callbacks_owed',
      help: "Callbacks in this core's outbox, in memory and on disk: owed until delivered, refused, given up or handed to a bus that keeps them",
    }),
);

export const callbacksOwedPerApplication = once(
  'hermod_callbacks_owed_per_application',
  () =>
    new ReadMapGauge({
      name: 'hermod_callbacks_owed_per_application',
      help: "Callbacks this core's outbox owes each application (by id), in memory and on disk, tried or not yet: grows while its receiver takes them slower than they are made, or not at all; 0 once all are delivered, refused or given up",
      labelNames: ['application'] as const,
    }),
);

export const callbacksUnacknowledged = once(
  'hermod_callbacks_unacknowledged',
  () =>
    new Gauge({
      name: 'hermod_callbacks_unacknowledged',
      help: "Callbacks this core published on the Redis bus and keeps in its outbox until the callback senders' group has acknowledged them (published again if Redis comes back without its data); growing: no core is taking callbacks from the topic",
    }),
);

export const callbacksOwedOnDisk = once(
  'hermod_callbacks_owed_on_disk',
  () =>
    new Gauge({
      name: 'hermod_callbacks_owed_on_disk',
      help: 'Callbacks this core owes that wait in their application\'s queue on disk, beyond HERMOD_CALLBACKS_IN_MEMORY (hermod_memory_entries{structure="callbacks_owed"} counts those in memory)',
    }),
);

export const smppWindowInUse = once(
  'hermod_smpp_window_in_use',
  () =>
    new ReadGauge({
      name: 'hermod_smpp_window_in_use',
      help: 'Outstanding submit_sm and query_sm awaiting their answer (they share the window), per bind',
      labelNames: ['bind'] as const,
    }),
);

export const smppBindUp = once(
  'hermod_smpp_bind_up',
  () =>
    new Gauge({
      name: 'hermod_smpp_bind_up',
      help: "Whether an SMPP bind is up (1) or down (0); across a service's processes the lowest counts",
      labelNames: ['bind'] as const,
      // One process with its bind down is an outage of that bind, whatever the others do.
      aggregator: 'min',
    }),
);

export const smppSubmits = once(
  'hermod_smpp_submits_total',
  () =>
    new TalliedCounter({
      name: 'hermod_smpp_submits_total',
      help: 'submit_sm sent to the carrier, by outcome',
      labelNames: ['outcome'] as const,
    }),
);

export const carrierSubmits = once(
  'hermod_smpp_carrier_submits_total',
  () =>
    new TalliedCounter({
      name: 'hermod_smpp_carrier_submits_total',
      help: 'submit_sm per SMS carrier, by outcome: accepted, rejected, throttled (ESME_RTHROTTLED), error (other transient failures)',
      labelNames: ['carrier', 'outcome'] as const,
    }),
);

export const carrierWindowInUse = once(
  'hermod_smpp_carrier_window_in_use',
  () =>
    new ReadGauge({
      name: 'hermod_smpp_carrier_window_in_use',
      help: 'Outstanding submit_sm and query_sm awaiting their answer (they share the window), over every bind to an SMS carrier',
      labelNames: ['carrier'] as const,
    }),
);

export const carrierBindsUp = once(
  'hermod_smpp_carrier_binds_up',
  () =>
    new Gauge({
      name: 'hermod_smpp_carrier_binds_up',
      help: 'Binds to an SMS carrier that are up, summed over the SMS workers',
      labelNames: ['carrier'] as const,
    }),
);

export const carrierFailovers = once(
  'hermod_smpp_carrier_failovers_total',
  () =>
    new Counter({
      name: 'hermod_smpp_carrier_failovers_total',
      help: "Messages sent to a route's later carrier because an earlier one was down or past its error threshold, by the carrier passed over",
      labelNames: ['carrier'] as const,
    }),
);

export const receiptLatency = once(
  'hermod_smpp_receipt_latency_seconds',
  () =>
    new Histogram({
      name: 'hermod_smpp_receipt_latency_seconds',
      help: 'Time from carrier acceptance to delivery receipt',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    }),
);

export const carrierQueries = once(
  'hermod_carrier_queries_total',
  () =>
    new TalliedCounter({
      name: 'hermod_carrier_queries_total',
      help: 'Messages the channel workers asked their carrier about (SMPP query_sm) because their delivery receipts may have been lost with a Redis bus, by channel and outcome (final: a final state found and reported; pending: still on its way or unknown to the carrier; unaskable: the carrier cannot be asked, or never answered in five hand-outs)',
      labelNames: ['channel', 'outcome'] as const,
    }),
);

export const carrierSends = once(
  'hermod_carrier_sends_total',
  () =>
    new TalliedCounter({
      name: 'hermod_carrier_sends_total',
      help: 'Messages handed to a carrier by the channel workers, by channel and outcome (submitted, rejected, retried, frozen; deferred: refused for now, tried again later; cancelled: dropped unsent because it was overtaken or its campaign cancelled; paused: parked until its campaign resumes; already_submitted: handed over again after its submitted report was lost, on the Redis bus, and not sent again)',
      labelNames: ['channel', 'outcome'] as const,
    }),
);

export const carrierSendDuration = once(
  'hermod_carrier_send_duration_seconds',
  () =>
    new Histogram({
      name: 'hermod_carrier_send_duration_seconds',
      help: 'Time from handing a message to the carrier to its answer (submit_sm_resp, SMTP reply, HTTP response), by channel and outcome: submitted, rejected, transient (refused for now, or no answer: tried again), uncertain (the carrier may have it)',
      labelNames: ['channel', 'outcome'] as const,
      // To an SMTP relay's 5 minutes.
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 300],
    }),
);

export const imAttempts = once(
  'hermod_im_attempts_total',
  () =>
    new Counter({
      name: 'hermod_im_attempts_total',
      help: 'Intelligent Messaging delivery attempts, by channel and how they ended (succeeded, failed, timed_out), and reports that came after the attempt stopped counting (late_report)',
      labelNames: ['channel', 'outcome'] as const,
    }),
);

export const historyFlushFailures = once(
  'hermod_history_flush_failures_total',
  () =>
    new Counter({
      name: 'hermod_history_flush_failures_total',
      help: 'Flushes of the history journal into ClickHouse that failed (the rows stay journaled and the flush is retried)',
    }),
);

export const campaignsSending = once(
  'hermod_campaigns_sending',
  () =>
    new Gauge({
      name: 'hermod_campaigns_sending',
      help: 'Campaigns started and not yet handed in full to their channel',
    }),
);

export const campaignMessages = once(
  'hermod_campaign_messages_total',
  () =>
    new Counter({
      name: 'hermod_campaign_messages_total',
      help: 'Messages created by campaign fan-out',
    }),
);

export const journalDamagedLines = once(
  'hermod_journal_damaged_lines_total',
  () =>
    new Counter({
      name: 'hermod_journal_damaged_lines_total',
      help: "History journal lines that could not be read on replay and were set aside in the journal's damaged/ folder, by reason (not_utf8, not_json, unknown_kind)",
      labelNames: ['reason'] as const,
    }),
);

/** Where /metrics is served, and the bearer token a scrape must carry (HERMOD_METRICS_TOKEN; '' for none). */
export interface MetricsListen {
  port: number;
  host: string;
  token: string;
}

/** Whether an Authorization header carries `Bearer <token>`, compared in constant time (digests of equal length). */
export function carriesBearer(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(m[1]!), digest(token));
}

/** The scraper's timeout in ms, from Prometheus's X-Prometheus-Scrape-Timeout-Seconds (e.g. `10`, `0.5`); undefined without one. */
function scrapeTimeoutMs(header: string | string[] | undefined): number | undefined {
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  return header !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
}

/**
 * Serves /metrics; `ofProcesses` gathers those of `hermod start`'s processes (supervisor only, cluster-metrics.ts); `maker`: what this process runs alone.
 * With a token, a scrape without it is answered 401 (Prometheus sends it with `authorization: {credentials: …}`).
 */
export function serveMetrics(
  listen: MetricsListen,
  log: Logger,
  ofProcesses?: (scrapeTimeoutMs?: number) => Promise<string>,
  maker?: MetricsMaker,
): Promise<http.Server> {
  const { port, host, token } = listen;
  const server = http.createServer(async (req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (token && !carriesBearer(req.headers.authorization, token)) {
      res
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer realm="hermod metrics"' })
        .end('a bearer token is required (HERMOD_METRICS_TOKEN)\n');
      return;
    }
    try {
      const body = ofProcesses ? await ofProcesses(scrapeTimeoutMs(req.headers['x-prometheus-scrape-timeout-seconds'])) : await processMetrics(maker);
      res.writeHead(200, { 'content-type': register.contentType }).end(body);
    } catch (err) {
      log.warn('metrics collection failed', { err });
      res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
    }
  });
  return new Promise((resolve, reject) => {
    const holders = 'another hermod process: each one run on its own needs a HERMOD_METRICS_PORT of its own';
    const failed = (err: Error): void => reject(listenError(err, 'HERMOD_METRICS_PORT', host, port, holders, 'HERMOD_HOST'));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(server);
    });
  });
}

export const unmatchedReports = once(
  'hermod_delivery_reports_unmatched_total',
  () =>
    new Counter({
      name: 'hermod_delivery_reports_unmatched_total',
      help: "Delivery reports whose carrier id matched no message when they came (held to be matched again, matched later, or dropped), or that came before their submit's own report and waited for it (early)",
      labelNames: ['outcome'] as const,
    }),
);

/** Sources of hermod_memory_entries: structure name → how many entries it holds now; `before` runs first (expiry). */
interface EntrySources {
  sizes: Record<string, () => number>;
  before?: () => void;
}
const entrySources = new Set<EntrySources>();

export const memoryEntries = once(
  'hermod_memory_entries',
  () =>
    new Gauge({
      name: 'hermod_memory_entries',
      help: 'Entries held in memory by structure (hot state maps, recent messages): they leave when final or too old, so this follows what is in flight',
      labelNames: ['structure'] as const,
      collect() {
        this.reset();
        const totals = new Map<string, number>();
        for (const sources of entrySources) {
          sources.before?.();
          for (const [name, size] of Object.entries(sources.sizes)) totals.set(name, (totals.get(name) ?? 0) + size());
        }
        for (const [structure, n] of totals) this.set({ structure }, n);
      },
    }),
);

/** Counts these structures in hermod_memory_entries until the returned function is called. */
export function trackEntries(sizes: EntrySources['sizes'], before?: () => void): () => void {
  const sources = { sizes, before };
  entrySources.add(sources);
  return () => entrySources.delete(sources);
}

/** The SMSC simulator's submits (the handset's own messages, passed on as replies, left out), read at each scrape. */
export function watchSimulatorSubmits(read: () => number): void {
  if (register.getSingleMetric('hermod_smsc_simulator_submits_total')) return;
  new Counter({
    name: 'hermod_smsc_simulator_submits_total',
    help: 'submit_sm the SMSC simulator took from ESMEs (hermod): what a load test reached the simulated carrier with',
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}
