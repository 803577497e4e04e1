import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';

/** prom-client's messages between a cluster's primary and its workers (answered in each worker: answerClusterMetricRequests). */
const REQUEST = 'prom-client:getMetricsReq';
const RESPONSE = 'prom-client:getMetricsRes';

/** A process of `hermod start` as its metrics name it. `ready`: started, so it answers requests for its metrics. */
export interface MetricsProcess {
  /** None while it is being started again after it died. */
  worker?: Worker;
  /** The `process` label of its samples: `core`, `gateway-0`, `worker-sms`, … */
  name: string;
  ready: boolean;
}

/** A metric as a process's registry gives it (getMetricsAsJSON), as it travels between processes. */
interface MetricJson {
  name: string;
  help: string;
  type: string;
  aggregator?: string;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
}
type Metrics = MetricJson[];
interface Answer {
  metrics?: Metrics[];
  error?: string;
}

/**
 * The metrics of every process of `hermod start`, for the supervisor's
 * /metrics: each process's samples carry a `process` label, as scraping each
 * process on its own gives each an `instance`. Summed into one, a role that
 * restarts took its counters back by what it had counted, which Prometheus
 * reads as a reset of the whole sum (increase() then counts the rest twice),
 * and gauges such as the file-descriptor limit added up to a limit no process
 * has. A process that does not answer within `timeoutMs` (stopped, busy,
 * dying) is left out of that scrape, not the whole scrape failed with it;
 * `hermod_role_up` says which one it was. 4 s: longer than a process's own
 * collectors wait for theirs (its pools thread, 2 s; the history engine, 1 s),
 * so a slow collector costs its own samples, not its process's; shorter than
 * Prometheus's scrape timeout (10 s).
 */
export function createClusterMetrics(processes: () => readonly MetricsProcess[], timeoutMs = 4000): (scrapeTimeoutMs?: number) => Promise<string> {
  let next = 0;
  const waiting = new Map<string, (answer: Answer) => void>();
  cluster.on('message', (_worker, message: { type?: string; requestId?: string; metrics?: Metrics[]; error?: string }) => {
    if (message?.type !== RESPONSE || typeof message.requestId !== 'string') return;
    waiting.get(message.requestId)?.({ metrics: message.metrics, error: message.error });
  });

  const ask = (worker: Worker, waitMs: number): Promise<Metrics[] | undefined> =>
    new Promise((resolve) => {
      const requestId = `hermod-${++next}`;
      const gone = (): void => done({ error: 'exited' });
      const done = (answer: Answer): void => {
        clearTimeout(timer);
        waiting.delete(requestId);
        worker.off('exit', gone);
        resolve(answer.error === undefined ? answer.metrics : undefined);
      };
      const timer = setTimeout(() => done({ error: 'timed out' }), waitMs);
      // One that dies meanwhile is not waited for.
      worker.once('exit', gone);
      waiting.set(requestId, done);
      try {
        worker.send({ type: REQUEST, requestId }, undefined, (err) => {
          if (err) done({ error: err.message });
        });
      } catch (err) {
        done({ error: String(err) });
      }
    });

  /**
   * `scrapeTimeoutMs`: how long the scraper waits (Prometheus says so in X-Prometheus-Scrape-Timeout-Seconds): the
   * processes are waited for at most half a second less, so a stopped one costs its own samples, never the scrape.
   */
  return async (scrapeTimeoutMs?: number) => {
    const waitMs = scrapeTimeoutMs === undefined ? timeoutMs : Math.max(100, Math.min(timeoutMs, scrapeTimeoutMs - 500));
    const asked = processes();
    const answers = await Promise.all(asked.map((p) => (p.worker && p.ready && p.worker.isConnected() ? ask(p.worker, waitMs) : Promise.resolve(undefined))));
    const up: MetricJson = {
      name: 'hermod_role_up',
      help: '1 when the process of a role answered this scrape in time, 0 when it did not (starting, restarting, stopped, busy or dying): its samples are left out of that scrape',
      type: 'gauge',
      aggregator: 'sum',
      values: asked.map((p, i) => ({ value: answers[i] ? 1 : 0, labels: { process: p.name } })),
    };
    const labelled = answers.flatMap((registries, i) => (registries ?? []).map((metrics) => metrics.map((m) => labelledWith(m, asked[i]!.name))));
    return AggregatorRegistry.aggregate([...labelled, [up]]).metrics();
  };
}

/** A process's metric with its name in every sample; one per process (a start time) is kept, not left out as a sum would be. */
function labelledWith(metric: MetricJson, process: string): MetricJson {
  return {
    ...metric,
    aggregator: metric.aggregator === 'omit' ? 'first' : metric.aggregator,
    values: metric.values.map((v) => ({ ...v, labels: { ...v.labels, process } })),
  };
}
