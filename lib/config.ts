import os from 'node:os';
import path from 'node:path';
import { type BindMode, type CarrierConfig, CarriersFileError, countryCallingCode, loadCarriersFile, type CarriersConfig } from './carriers-file';
import { parseDuration } from './duration';
import { LOG_LEVELS, type LogLevel } from './log';
import { DOMAIN_NAME, senderDomain } from './sender-domain';
import { checkCertificateAndKey, TlsFileError } from './tls-files';
import { parseTrustedProxies, TrustedProxyError } from './trusted-proxies';

/** Fewest characters of HERMOD_BOUNCE_SECRET: what signs every return path (workers/carriers/smtp/verp.ts). */
const MIN_BOUNCE_SECRET = 16;

/**
 * All configuration, parsed once at start-up from the environment into a
 * frozen object. Nothing else in hermod reads process.env.
 */
export interface SmppConfig {
  host: string;
  port: number;
  systemId: string;
  password: string;
  systemType: string;
  windowSize: number;
  enquireLinkMs: number;
  submitTimeoutMs: number;
  /** How long, from its sending, a submit's answer is waited for in all before it is made again (its window slot freed after submitTimeoutMs). */
  answerWaitMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  bindMode: BindMode;
  /** HERMOD_SMPP_COUNTRY_CODE: the carrier's country calling code, for handsets it gives in their national format (carriers-file.ts). */
  countryCode: string | undefined;
}

export interface SimulatorConfig {
  /** Start the SMSC simulator with the service (the embedded carrier). */
  enabled: boolean;
  host: string;
  port: number;
  receiptDelayMs: number;
  outcomes: { delivered: number; undeliverable: number; expired: number; rejected: number };
}

/** SMTP relay of the email channel (nodemailer, pooled connections). */
export interface EmailConfig {
  host: string;
  port: number;
  /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user: string;
  pass: string;
  /** Header sender, and the envelope sender when bounces are not read. */
  from: string;
  maxConnections: number;
  /**
   * Where bounces go: each e-mail's envelope sender (return path) is
   * `bounces+<message id>@<bounceDomain>` (VERP); '' sends with `from` instead.
   */
  bounceDomain?: string;
  /** The inbound SMTP listener that reads bounces (RFC 3464 DSNs); undefined: off. Port 0 picks a free one. */
  bounceListener?: { host: string; port: number };
  /**
   * What return paths are signed with (HERMOD_BOUNCE_SECRET), the same on every
   * e-mail worker; '' when not set, and a worker with a bounce domain then
   * keeps one in its data directory (bounce-secret-file.ts).
   */
  bounceSecret?: string;
}

/** An HTTP carrier API (WhatsApp Cloud API, RCS Business Messaging, an MMS provider). */
export interface HttpCarrierConfig {
  /** e.g. https://graph.facebook.com for WhatsApp. */
  baseUrl: string;
  /** Bearer token for the carrier's API. */
  token: string;
  /** WhatsApp phone number id, RBM agent id, or the MMS sender number. */
  sender: string;
  /** Verifies the carrier's signed webhooks (WhatsApp app secret, RBM client token, MMS shared secret). */
  webhookSecret: string;
  /** WhatsApp Graph API version, e.g. v21.0 (others ignore it). */
  apiVersion: string;
  /** How long a send waits for the carrier's answer. */
  requestTimeoutMs?: number;
  /**
   * A send whose answer never came may have been taken: true resends it anyway
   * (a possible duplicate); false (default) marks it uncertain (frozen) when the
   * carrier cannot be asked by our id. Only WhatsApp reads it.
   */
  resendUncertain?: boolean;
}

/** RCS Business Messaging: an HTTP carrier whose bearer tokens come from a service account (OAuth), not from the configuration. */
export interface RcsCarrierConfig extends Omit<HttpCarrierConfig, 'token'> {
  /** Path of the service account's JSON key file (HERMOD_RCS_SERVICE_ACCOUNT); '' when none is set. */
  serviceAccount: string;
}

export interface ChannelSimulatorsConfig {
  /** Start the SMTP sink and the WhatsApp, RCS and MMS simulators with the service. */
  enabled: boolean;
  smtpPort: number;
  wabPort: number;
  rcsPort: number;
  mmsPort: number;
  /** Where the simulators post their status webhooks (the gateway's /webhooks). */
  webhookBase: string;
}

export interface BootstrapConfig {
  app: string;
  password: string;
  apiKey: string;
}

export type BusKind = 'memory' | 'redis' | 'kafka';
export type StateKind = 'memory' | 'redis';
export type HistoryKind = 'chdb' | 'clickhouse';

export interface AdaptersConfig {
  bus: BusKind;
  state: StateKind;
  history: HistoryKind;
  /** Partitions per topic (Redis streams per topic, Kafka partitions when hermod creates the topic). */
  busPartitions: number;
  /** A single Redis (`redis://` / `rediss://` URL); unused when `redisCluster` is set. */
  redisUrl: string;
  /** Redis Cluster seed nodes (HERMOD_REDIS_CLUSTER=true; HERMOD_REDIS_URL lists them); undefined for a single Redis. */
  redisCluster: RedisClusterConfig | undefined;
  redisPrefix: string;
  /**
   * Replicas that must hold a hot-state write before it is acknowledged (Redis WAIT), at most as many as the
   * cluster lists for the key's slot; 0 acknowledges on the master's word alone.
   */
  redisWaitReplicas: number;
  /** How long a write waits for those replicas before it fails as unavailable. */
  redisWaitTimeoutMs: number;
  /** How long hot state waits for Redis to answer a command before failing it as unavailable (a stalled Redis). */
  redisCommandTimeoutMs: number;
  /** How long a message stays in hot state (Redis or in-process) once its status is final (then it is read from history). */
  stateFinalTtlMs: number;
  /**
   * How long a message sent with an Idempotency-Key stays in hot state once
   * its status is final (HERMOD_IDEMPOTENCY_TTL): a retry whose first try's
   * answer was lost finds its message as long as the key could have.
   */
  keyedFinalTtlMs: number;
  kafkaBrokers: string[];
  kafkaReplicationFactor: number;
  /** Create missing Kafka topics; off where an operator owns the topics (ACLs, partition counts). */
  kafkaCreateTopics: boolean;
  /** How long a consumer-group member may go silent before the group hands its partitions to others (a member killed with -9 holds them this long). */
  kafkaSessionTimeoutMs: number;
  clickhouseUrl: string;
  clickhouseDatabase: string;
  /** The embedded chDB engine's memory limit (max_server_memory_usage), bytes. */
  chdbMaxMemoryBytes: number;
  /** The embedded chDB engine's mark and primary-index cache sizes, bytes (smaller caches get a quarter). */
  chdbCacheBytes: number;
  /** Run the channel worker pools inside the core process (required with the in-process bus). */
  coreRunsWorkers: boolean;
  /** When core runs the pools: on a worker thread of their own (true) or on core's main thread. */
  poolsThread: boolean;
}

/** Where a Redis Cluster is reached: any of its nodes (the client learns the rest), and how. */
export interface RedisClusterConfig {
  nodes: { host: string; port: number }[];
  username: string;
  password: string;
  /** `rediss://`: TLS to every node. */
  tls: boolean;
}

/** Mutual TLS between roles (gRPC): this process's certificate and key, and the CA that signs every role's. */
export interface GrpcTlsConfig {
  certFile: string;
  keyFile: string;
  caFile: string;
}

/** The operator console: its own small HTTP server, behind HTTP Basic, reading core's admin API. */
export interface AdminConsoleConfig {
  /** 127.0.0.1 unless an operator opens it wider. */
  host: string;
  port: number;
  user: string;
  /** Empty: the console does not start. */
  password: string;
}

export interface Config {
  dataDir: string;
  logLevel: LogLevel;
  adapters: AdaptersConfig;
  host: string;
  httpsPort: number;
  httpPort: number;
  metricsPort: number;
  /** Bearer token a scrape of /metrics must carry; '' serves metrics to anyone who reaches the port. */
  metricsToken: string;
  admin: AdminConsoleConfig;
  tlsCertFile: string;
  tlsKeyFile: string;
  /** Where core serves gRPC and where gateways reach it. */
  coreAddress: string;
  /** Mutual TLS on that gRPC hop; unset means plaintext, allowed only on loopback. */
  grpcTls: GrpcTlsConfig | undefined;
  /** This core's number (0..15) when several run: part of every numeric message id. */
  coreInstance: number;
  gateways: number;
  bootstrap: BootstrapConfig | undefined;
  smpp: SmppConfig;
  /** The SMS carriers and routes: HERMOD_CARRIERS_FILE, or one carrier named `smpp` from the HERMOD_SMPP_* variables. */
  carriers: CarriersConfig;
  simulator: SimulatorConfig;
  channels: { email: EmailConfig; wab: HttpCarrierConfig; rcs: RcsCarrierConfig; mms: HttpCarrierConfig };
  channelSimulators: ChannelSimulatorsConfig;
  im: {
    /** Delivery attempts when a request has none and its application sets none, e.g. `wab:read:60,sms`. */
    defaultAttempts: string;
    /** Requests per second per application on Intelligent Messaging (X-RateLimit-Limit, 0..100). */
    rateLimit: number;
    /** How long an attempt that gives no `timeout` (or 0) waits for its event; 0: no deadline. */
    defaultTimeoutMs: number;
  };
  /** A request whose client sends nothing for this long is dropped (a truncated body). */
  requestIdleTimeoutMs: number;
  /** Bytes a second a request body must average after its first idle window (0: no rate). */
  requestMinBytesPerSecond: number;
  /** Largest accepted request body, in bytes. */
  maxBodyBytes: number;
  /** How long a gateway waits to gather sends into one call to core. */
  gatewayBatchDelayMs: number;
  gatewayBatchMax: number;
  /** How far ahead v1/v2 messages and Campaign Manager campaigns may be scheduled. */
  scheduleHorizonMs: number;
  /** How long an Idempotency-Key and its answer are kept. */
  idempotencyTtlMs: number;
  /**
   * How long after a start, or after hot state lost its data, keyed sends
   * look in history for the keyed messages of as long before (their answers
   * may be gone with hot state).
   */
  idempotencyHistoryCheckMs: number;
  /**
   * How long a claimed key whose request has not answered yet is held
   * unless renewed: the gateway renews it every third of this while the
   * request runs; one that dies mid-request renews, answers and releases it
   * no more, and its client's retries are refused (409) only until then.
   */
  idempotencyLeaseMs: number;
  /** How long core keeps a message it accepted in memory, final or not (in flight longer: read from history). */
  recentMessagesMaxAgeMs: number;
  /** Scheduled messages due within this long are held in memory; later ones wait in files under the data directory. */
  schedulerMemoryWindowMs: number;
  /** How long a carrier's second delivery of the same reply (MO) is recognised and dropped. */
  moDedupWindowMs: number;
  callbacks: {
    /** Retries of a failing callback stop this long after the event. */
    retryForMs: number;
    timeoutMs: number;
    /** Allow callback URLs that resolve to loopback or private addresses (development only). */
    allowPrivate: boolean;
    /** Worker threads that deliver callbacks (0: core's own thread). */
    threads: number;
    /** Most owed callbacks a core keeps in memory; the rest wait in the outbox on disk. */
    inMemory: number;
  };
  /** Base of the short links put into SMS Gateway v2 content; the gateway serves `<base>/<code>` at /l/<code>. */
  shortLinkBase: string;
  /** How long a successful credential check is cached by a gateway. */
  authCacheMs: number;
  /**
   * A message its carrier keeps refusing for a reason that passes is handed
   * over again later (channel-worker.ts): first after `firstMs`, then as long
   * as it has been refused so far up to `longestMs`; frozen after `forMs`.
   */
  sendRetry: { firstMs: number; longestMs: number; forMs: number };
  /** Failed credential checks a gateway allows per application name and per client address before refusing for a back-off. */
  authFailures: { perName: number; perAddress: number; backoffMs: number; maxBackoffMs: number };
  /** HERMOD_TRUSTED_PROXIES: addresses and networks whose X-Forwarded-For names the client (checked as parsed). */
  trustedProxies: string[];
  /** Open connections a gateway takes from one client address (trusted proxies not counted); 0: no cap. */
  maxConnectionsPerAddress: number;
  shutdownGraceMs: number;
  campaigns: {
    /** Members per fan-out partition (one job on the fan-out topic). */
    partitionSize: number;
    /** Fan-out pauses while the SMS workers have more than this many messages in hand. */
    maxBacklog: number;
    /** SMS submits (segments) per second a campaign dry-run estimates its duration at. */
    ratePerSecond: number;
  };
  /** Largest Campaign Manager list or campaign body, in bytes. */
  maxImportBytes: number;
  /**
   * How often journaled history writes are flushed to the history engine.
   * Each flush is one insert, one new part per table, and every part is merged
   * again in the background: at 200 ms the embedded engine's merges took a
   * third of a core at 100 messages/s (bench/RESULTS.md, fifth session).
   * Reads that must see the last moments flush first, whatever the interval.
   */
  historyFlushMs: number;
  /** fdatasync every journal append (survives power loss, costs latency). */
  journalFsync: boolean;
  /**
   * How far core's V8 heap may grow past what its last full collection kept,
   * in per cent, before the next one (V8's own choice, 0 here, lets it reach
   * about four times the live set under a campaign's allocation rate).
   */
  coreHeapGrowthPercent: number;
  /**
   * Largest semi-space of the young generation of each process `hermod start`
   * runs but core, in MB (V8's `--max-semi-space-size`; 0: V8's own, 16 MB here). Each
   * process's young generation grows to twice this under load and stays there.
   */
  semiSpaceMb: number;
  /**
   * The same for core alone (HERMOD_CORE_SEMI_SPACE_MB): core allocates for
   * every message, and what a message allocates mostly outlives a small
   * young generation's collections, so it is copied twice on its way to the
   * old generation.
   */
  coreSemiSpaceMb: number;
  /**
   * Processes run from the bundle of the sources (HERMOD_BUILD). bin/hermod.js
   * acts on it before any configuration is read; it is read here too, so a value
   * that is neither true nor false is refused like any other.
   */
  runsFromBuild: boolean;
  /** OpenTelemetry traces over OTLP/HTTP; off (no SDK loaded) unless an OTLP endpoint is set. */
  tracing: TracingConfig;
}

/**
 * Whether traces are exported. The standard OTEL_* variables decide it; the
 * SDK itself reads the rest of them (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER,
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_*, …) once tracing is on.
 */
export interface TracingConfig {
  enabled: boolean;
  /** Where spans go (for the start-up line). */
  endpoint: string;
  /** OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL as set ('' unset); hermod sends http/json whatever it says. */
  protocol: string;
}

function resolveTracingConfig(env: Env): TracingConfig {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || '';
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none';
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || '').trim();
  return { enabled: endpoint !== '' && !disabled, endpoint, protocol };
}

type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

/**
 * Gateway processes `npm start` runs unless told: one per core beside the
 * core that core's main thread needs, at least one. A gateway on every core
 * as well oversubscribes the machine: on 2 cores, one gateway instead of two
 * took a third less CPU per accepted message in most runs, its batches to
 * core twice as large (bench/RESULTS.md, fourth session).
 */
export function defaultGateways(cores = os.availableParallelism()): number {
  return Math.max(1, cores - 1);
}

export function resolveConfig(env: Env = process.env): Readonly<Config> {
  const str = (name: string, fallback: string): string => env[name] ?? fallback;
  const int = (name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    }
    return value;
  };
  const duration = (name: string, fallback: string): number => {
    try {
      return parseDuration(env[name] ?? fallback);
    } catch (err) {
      throw new ConfigError(`${name}: ${(err as Error).message}`);
    }
  };
  const sendRetry = (): Config['sendRetry'] => {
    const firstMs = duration('HERMOD_SEND_RETRY_FIRST', '1m');
    const longestMs = duration('HERMOD_SEND_RETRY_LONGEST', '1h');
    const forMs = duration('HERMOD_SEND_RETRY_FOR', '24h');
    if (firstMs <= 0) throw new ConfigError('HERMOD_SEND_RETRY_FIRST must be longer than 0');
    if (longestMs < firstMs) throw new ConfigError('HERMOD_SEND_RETRY_LONGEST must not be shorter than HERMOD_SEND_RETRY_FIRST');
    return { firstMs, longestMs, forMs };
  };
  const authFailures = (): Config['authFailures'] => {
    const backoffMs = duration('HERMOD_AUTH_BACKOFF', '10s');
    const maxBackoffMs = duration('HERMOD_AUTH_BACKOFF_MAX', '15m');
    if (backoffMs < 1000) throw new ConfigError(`HERMOD_AUTH_BACKOFF must be at least 1s, got ${JSON.stringify(env.HERMOD_AUTH_BACKOFF)}`);
    if (maxBackoffMs < backoffMs)
      throw new ConfigError(`HERMOD_AUTH_BACKOFF_MAX must be at least HERMOD_AUTH_BACKOFF, got ${JSON.stringify(env.HERMOD_AUTH_BACKOFF_MAX)}`);
    return {
      perName: int('HERMOD_AUTH_FAILURES_PER_NAME', 5, 1),
      perAddress: int('HERMOD_AUTH_FAILURES_PER_ADDRESS', 20, 1),
      backoffMs,
      maxBackoffMs,
    };
  };
  const trustedProxies = (): string[] => {
    const entries = str('HERMOD_TRUSTED_PROXIES', '')
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    try {
      parseTrustedProxies(entries);
    } catch (err) {
      if (err instanceof TrustedProxyError) throw new ConfigError(`HERMOD_TRUSTED_PROXIES: ${err.message}`);
      throw err;
    }
    return entries;
  };
  // Within what a Kafka broker takes by default (group.min/max.session.timeout.ms), or every join is refused.
  const kafkaSessionTimeout = (): number => {
    const ms = duration('HERMOD_KAFKA_SESSION_TIMEOUT', '30s');
    if (ms < 6_000 || ms > 1_800_000)
      throw new ConfigError(
        `HERMOD_KAFKA_SESSION_TIMEOUT must be from 6s to 30m (what brokers take by default), got ${JSON.stringify(env.HERMOD_KAFKA_SESSION_TIMEOUT)}`,
      );
    return ms;
  };
  // Whole seconds, at most the 604800 s a request's `timeout` may ask for (SPEC.md §2.4).
  const imTimeout = (name: string, fallback: string): number => {
    const ms = duration(name, fallback);
    if (ms % 1000 !== 0 || ms > 604_800_000) throw new ConfigError(`${name} must be whole seconds from 0 to 7d, got ${JSON.stringify(env[name])}`);
    return ms;
  };
  // Bytes, or a number with K, M or G (binary: 512M is 512 MiB).
  const bytes = (name: string, fallback: string): number => {
    const raw = env[name] || fallback;
    const m = /^(\d+)\s*([KMG])?i?B?$/i.exec(raw.trim());
    if (!m) throw new ConfigError(`${name} must be a size in bytes such as 536870912 or 512M, got ${JSON.stringify(raw)}`);
    return Number(m[1]) * 1024 ** ' KMG'.indexOf((m[2] ?? ' ').toUpperCase());
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(raw)}`);
  };

  const dataDir = path.resolve(str('HERMOD_DATA_DIR', './data'));
  const simulatorEnabled = bool('HERMOD_SMSC_SIMULATOR', true);
  const simulatorPort = int('HERMOD_SMSC_PORT', 2775, 0, 65535);
  const bootstrapApp = env.HERMOD_BOOTSTRAP_APP;

  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = env[name] || fallback;
    if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(raw)}`);
    return raw as T;
  };
  const bus = oneOf<BusKind>('HERMOD_BUS', ['memory', 'redis', 'kafka'], 'memory');
  const redisUrl = str('HERMOD_REDIS_URL', 'redis://127.0.0.1:6379');
  const redisCluster = bool('HERMOD_REDIS_CLUSTER', false) ? clusterOf('HERMOD_REDIS_URL', redisUrl) : undefined;
  const history = oneOf<HistoryKind>('HERMOD_HISTORY', ['chdb', 'clickhouse'], 'chdb');
  const adapters: AdaptersConfig = {
    bus,
    state: oneOf<StateKind>('HERMOD_STATE', ['memory', 'redis'], 'memory'),
    history,
    busPartitions: int('HERMOD_BUS_PARTITIONS', 16, 1, 4096),
    redisUrl,
    redisCluster,
    redisPrefix: str('HERMOD_REDIS_PREFIX', 'hermod'),
    // A cluster fails a master over to its replica, so a write counts once the replica has it; a single Redis has no one to fail over to.
    redisWaitReplicas: int('HERMOD_REDIS_WAIT_REPLICAS', redisCluster ? 1 : 0, 0, 16),
    redisWaitTimeoutMs: duration('HERMOD_REDIS_WAIT_TIMEOUT', '1s'),
    redisCommandTimeoutMs: duration('HERMOD_REDIS_COMMAND_TIMEOUT', '5s'),
    stateFinalTtlMs: duration('HERMOD_STATE_FINAL_TTL', '1m'),
    keyedFinalTtlMs: duration('HERMOD_IDEMPOTENCY_TTL', '24h'),
    kafkaBrokers: str('HERMOD_KAFKA_BROKERS', '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean),
    kafkaReplicationFactor: int('HERMOD_KAFKA_REPLICATION_FACTOR', 0, 0, 16),
    kafkaCreateTopics: bool('HERMOD_KAFKA_CREATE_TOPICS', true),
    kafkaSessionTimeoutMs: kafkaSessionTimeout(),
    clickhouseUrl: str('HERMOD_CLICKHOUSE_URL', ''),
    clickhouseDatabase: str('HERMOD_CLICKHOUSE_DATABASE', ''),
    chdbMaxMemoryBytes: bytes('HERMOD_CHDB_MAX_MEMORY', '512M'),
    chdbCacheBytes: bytes('HERMOD_CHDB_CACHE_SIZE', '64M'),
    coreRunsWorkers: bus === 'memory' ? true : bool('HERMOD_CORE_RUNS_WORKERS', false),
    poolsThread: bool('HERMOD_POOLS_THREAD', false),
  };
  if (bus === 'kafka' && adapters.kafkaBrokers.length === 0) throw new ConfigError('HERMOD_BUS=kafka needs HERMOD_KAFKA_BROKERS (host:port,host:port)');
  if (bus === 'redis' && redisCluster) {
    // Each partition's stream, consumer group and lease keys are not yet kept in one hash slot.
    throw new ConfigError('HERMOD_BUS=redis does not run on a Redis Cluster (HERMOD_REDIS_CLUSTER=true): use HERMOD_BUS=kafka, or a single Redis for the bus');
  }
  if (!redisCluster && (bus === 'redis' || adapters.state === 'redis')) checkRedisUrl(redisUrl);
  if (bus === 'kafka') for (const broker of adapters.kafkaBrokers) checkKafkaBroker(broker);
  if (adapters.redisWaitReplicas > 0 && adapters.redisWaitTimeoutMs < 1)
    throw new ConfigError('HERMOD_REDIS_WAIT_TIMEOUT must be at least 1ms (Redis reads 0 as wait forever)');
  if (adapters.redisCommandTimeoutMs < adapters.redisWaitTimeoutMs + 1000) {
    // A command that waits for replicas must be given the wait and time for the answer besides.
    const shown = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);
    throw new ConfigError(
      `HERMOD_REDIS_COMMAND_TIMEOUT must be at least a second more than HERMOD_REDIS_WAIT_TIMEOUT (${shown(adapters.redisWaitTimeoutMs)}): ` +
        `at least ${shown(adapters.redisWaitTimeoutMs + 1000)}, got ${JSON.stringify(env.HERMOD_REDIS_COMMAND_TIMEOUT ?? '5s')}`,
    );
  }
  if (history === 'clickhouse' && !adapters.clickhouseUrl) throw new ConfigError('HERMOD_HISTORY=clickhouse needs HERMOD_CLICKHOUSE_URL');

  const config: Config = {
    dataDir,
    logLevel: oneOf<LogLevel>('HERMOD_LOG_LEVEL', LOG_LEVELS, 'info'),
    adapters,
    host: str('HERMOD_HOST', '0.0.0.0'),
    httpsPort: int('HERMOD_HTTPS_PORT', 8443, 0, 65535),
    httpPort: int('HERMOD_HTTP_PORT', 8080, 0, 65535),
    metricsPort: int('HERMOD_METRICS_PORT', 9464, 0, 65535),
    metricsToken: metricsToken(str('HERMOD_METRICS_TOKEN', '')),
    admin: {
      host: str('HERMOD_ADMIN_HOST', '127.0.0.1'),
      port: int('HERMOD_ADMIN_PORT', 9465, 0, 65535),
      user: str('HERMOD_ADMIN_USER', 'admin'),
      password: str('HERMOD_ADMIN_PASSWORD', ''),
    },
    tlsCertFile: str('HERMOD_TLS_CERT', ''),
    tlsKeyFile: str('HERMOD_TLS_KEY', ''),
    coreAddress: coreAddressOf(str('HERMOD_CORE_ADDRESS', '127.0.0.1:50051')),
    grpcTls: grpcTls(env),
    coreInstance: int('HERMOD_CORE_INSTANCE', 0, 0, 15),
    gateways: int('HERMOD_GATEWAYS', defaultGateways(), 1, 256),
    bootstrap: bootstrapApp
      ? {
          app: bootstrapApp,
          password: str('HERMOD_BOOTSTRAP_PASSWORD', ''),
          apiKey: str('HERMOD_BOOTSTRAP_API_KEY', ''),
        }
      : undefined,
    smpp: {
      host: str('HERMOD_SMPP_HOST', '127.0.0.1'),
      port: int('HERMOD_SMPP_PORT', simulatorPort, 1, 65535),
      systemId: str('HERMOD_SMPP_SYSTEM_ID', 'hermod'),
      password: str('HERMOD_SMPP_PASSWORD', 'hermod'),
      systemType: str('HERMOD_SMPP_SYSTEM_TYPE', ''),
      windowSize: int('HERMOD_SMPP_WINDOW', 256, 1, 10_000),
      enquireLinkMs: duration('HERMOD_SMPP_ENQUIRE_LINK', '30s'),
      submitTimeoutMs: duration('HERMOD_SMPP_SUBMIT_TIMEOUT', '10s'),
      answerWaitMs: duration('HERMOD_SMPP_ANSWER_WAIT', '2m'),
      reconnectMinMs: duration('HERMOD_SMPP_RECONNECT_MIN', '250ms'),
      reconnectMaxMs: duration('HERMOD_SMPP_RECONNECT_MAX', '30s'),
      bindMode: oneOf<BindMode>('HERMOD_SMPP_BIND_MODE', ['transceiver', 'transmitter_receiver'], 'transceiver'),
      countryCode: env.HERMOD_SMPP_COUNTRY_CODE
        ? (() => {
            const code = countryCallingCode(env.HERMOD_SMPP_COUNTRY_CODE);
            if (typeof code !== 'string') throw new ConfigError(`HERMOD_SMPP_COUNTRY_CODE ${code.problem}`);
            return code;
          })()
        : undefined,
    },
    carriers: undefined as unknown as CarriersConfig,
    simulator: {
      enabled: simulatorEnabled,
      host: str('HERMOD_SMSC_HOST', '127.0.0.1'),
      port: simulatorPort,
      receiptDelayMs: duration('HERMOD_SMSC_RECEIPT_DELAY', '200ms'),
      outcomes: parseOutcomes(str('HERMOD_SMSC_OUTCOMES', 'delivered=1')),
    },
    maxBodyBytes: int('HERMOD_MAX_BODY_BYTES', 1024 * 1024, 1024),
    requestIdleTimeoutMs: duration('HERMOD_REQUEST_IDLE_TIMEOUT', '60s'),
    requestMinBytesPerSecond: int('HERMOD_REQUEST_MIN_RATE', 240),
    gatewayBatchDelayMs: duration('HERMOD_GATEWAY_BATCH_DELAY', '0ms'),
    gatewayBatchMax: int('HERMOD_GATEWAY_BATCH_MAX', 512, 1, 100_000),
    authCacheMs: duration('HERMOD_AUTH_CACHE', '60s'),
    sendRetry: sendRetry(),
    authFailures: authFailures(),
    trustedProxies: trustedProxies(),
    maxConnectionsPerAddress: int('HERMOD_MAX_CONNECTIONS_PER_ADDRESS', 1024, 0, 1_000_000),
    idempotencyTtlMs: duration('HERMOD_IDEMPOTENCY_TTL', '24h'),
    idempotencyHistoryCheckMs: duration('HERMOD_IDEMPOTENCY_HISTORY_CHECK', '15m'),
    idempotencyLeaseMs: duration('HERMOD_IDEMPOTENCY_LEASE', '1m'),
    recentMessagesMaxAgeMs: duration('HERMOD_RECENT_MESSAGES_MAX_AGE', '2m'),
    schedulerMemoryWindowMs: duration('HERMOD_SCHEDULER_MEMORY_WINDOW', '10m'),
    scheduleHorizonMs: duration('HERMOD_SCHEDULE_HORIZON', '60d'),
    moDedupWindowMs: duration('HERMOD_MO_DEDUP_WINDOW', '10m'),
    shortLinkBase: '',
    channels: undefined as unknown as Config['channels'],
    channelSimulators: undefined as unknown as ChannelSimulatorsConfig,
    im: undefined as unknown as Config['im'],
    callbacks: {
      retryForMs: duration('HERMOD_CALLBACK_RETRY_FOR', '24h'),
      timeoutMs: duration('HERMOD_CALLBACK_TIMEOUT', '10s'),
      allowPrivate: bool('HERMOD_CALLBACK_ALLOW_PRIVATE', false),
      threads: int('HERMOD_CALLBACK_THREADS', 1, 0, 16),
      inMemory: int('HERMOD_CALLBACKS_IN_MEMORY', 50_000, 100),
    },
    campaigns: {
      partitionSize: int('HERMOD_CAMPAIGN_PARTITION', 10_000, 100, 1_000_000),
      maxBacklog: int('HERMOD_CAMPAIGN_MAX_BACKLOG', 5000, 100),
      ratePerSecond: int('HERMOD_CAMPAIGN_RATE', 100, 1, 1_000_000),
    },
    maxImportBytes: int('HERMOD_MAX_IMPORT_BYTES', 256 * 1024 * 1024, 1024),
    shutdownGraceMs: duration('HERMOD_SHUTDOWN_GRACE', '10s'),
    historyFlushMs: duration('HERMOD_HISTORY_FLUSH', '2s'),
    journalFsync: bool('HERMOD_JOURNAL_FSYNC', false),
    coreHeapGrowthPercent: int('HERMOD_CORE_HEAP_GROWTH', 30, 0, 1000),
    semiSpaceMb: int('HERMOD_SEMI_SPACE_MB', 8, 0, 1024),
    coreSemiSpaceMb: int('HERMOD_CORE_SEMI_SPACE_MB', 32, 0, 1024),
    runsFromBuild: bool('HERMOD_BUILD', true),
    tracing: resolveTracingConfig(env),
  };
  config.carriers = carriersOf(env, config.smpp);
  const sims = bool('HERMOD_CHANNEL_SIMULATORS', true);
  const simPorts = {
    smtpPort: int('HERMOD_SMTP_SINK_PORT', 2525, 0, 65535),
    wabPort: int('HERMOD_WAB_SIMULATOR_PORT', 8701, 0, 65535),
    rcsPort: int('HERMOD_RCS_SIMULATOR_PORT', 8702, 0, 65535),
    mmsPort: int('HERMOD_MMS_SIMULATOR_PORT', 8703, 0, 65535),
  };
  config.channelSimulators = { enabled: sims, ...simPorts, webhookBase: str('HERMOD_WEBHOOK_BASE', `https://127.0.0.1:${config.httpsPort}/webhooks`) };
  // No default webhook secret: one in the source would let anyone forge delivery reports.
  // A real carrier (its URL set) needs one; the simulators get a random one per start (lib/supervisor.ts).
  const httpCarrier = (prefix: string, baseUrl: string, sender: string, apiVersion = ''): Omit<HttpCarrierConfig, 'token'> => {
    const url = env[`HERMOD_${prefix}_URL`];
    const webhookSecret = str(`HERMOD_${prefix}_WEBHOOK_SECRET`, '');
    if (url && !webhookSecret) {
      throw new ConfigError(
        `HERMOD_${prefix}_URL points at a carrier, so HERMOD_${prefix}_WEBHOOK_SECRET must be set (it verifies the carrier's signed webhooks)`,
      );
    }
    return {
      baseUrl: url || baseUrl,
      sender: str(`HERMOD_${prefix}_SENDER`, sender),
      webhookSecret,
      apiVersion: str(`HERMOD_${prefix}_API_VERSION`, apiVersion),
      requestTimeoutMs: duration(`HERMOD_${prefix}_REQUEST_TIMEOUT`, '10s'),
      resendUncertain: prefix === 'WAB' ? bool('HERMOD_WAB_RESEND_UNCERTAIN', false) : false,
    };
  };
  const smtpFrom = str('HERMOD_SMTP_FROM', 'hermod@localhost');
  // Off unless set; `npm start` runs it for its SMTP sink, which bounces to it. A sink on port 0
  // (tests running many services at once) gets a listener on port 0 too, which it is not told of.
  const bouncePort = env.HERMOD_BOUNCE_SMTP_PORT ?? (sims ? (simPorts.smtpPort === 0 ? '0' : '2526') : '');
  const bounceListener =
    bouncePort === '' ? undefined : { host: str('HERMOD_BOUNCE_SMTP_HOST', config.host), port: int('HERMOD_BOUNCE_SMTP_PORT', Number(bouncePort), 0, 65535) };
  const fromDomain = senderDomain(smtpFrom);
  if (fromDomain === undefined) {
    throw new ConfigError(`HERMOD_SMTP_FROM must be an e-mail address, alone or as Name <address>, got ${JSON.stringify(smtpFrom)}`);
  }
  const bounceDomain = str('HERMOD_BOUNCE_DOMAIN', bounceListener ? fromDomain : '');
  if (bounceDomain && !DOMAIN_NAME.test(bounceDomain)) {
    throw new ConfigError(`HERMOD_BOUNCE_DOMAIN must be a domain name, got ${JSON.stringify(bounceDomain)}`);
  }
  const bounceSecret = str('HERMOD_BOUNCE_SECRET', '');
  if (bounceSecret !== '' && bounceSecret.length < MIN_BOUNCE_SECRET) {
    throw new ConfigError(
      `HERMOD_BOUNCE_SECRET must be at least ${MIN_BOUNCE_SECRET} characters (random, the same on every e-mail worker), got ${bounceSecret.length}`,
    );
  }
  const http = (prefix: string, baseUrl: string, sender: string, apiVersion = ''): HttpCarrierConfig => ({
    ...httpCarrier(prefix, baseUrl, sender, apiVersion),
    token: str(`HERMOD_${prefix}_TOKEN`, 'simulator-token'),
  });
  config.channels = {
    email: {
      host: str('HERMOD_SMTP_HOST', '127.0.0.1'),
      port: int('HERMOD_SMTP_PORT', simPorts.smtpPort, 1, 65535),
      secure: bool('HERMOD_SMTP_SECURE', false),
      user: str('HERMOD_SMTP_USER', ''),
      pass: str('HERMOD_SMTP_PASSWORD', ''),
      from: smtpFrom,
      maxConnections: int('HERMOD_SMTP_MAX_CONNECTIONS', 5, 1, 100),
      bounceDomain,
      bounceListener,
      bounceSecret,
    },
    wab: http('WAB', `http://127.0.0.1:${simPorts.wabPort}`, '100000000000001', 'v21.0'),
    rcs: rcsConfig(
      httpCarrier('RCS', `http://127.0.0.1:${simPorts.rcsPort}`, 'hermod-agent'),
      str('HERMOD_RCS_SERVICE_ACCOUNT', ''),
      Boolean(env.HERMOD_RCS_URL),
    ),
    mms: http('MMS', `http://127.0.0.1:${simPorts.mmsPort}`, '+15550000000'),
  };
  config.im = {
    defaultAttempts: str('HERMOD_IM_DEFAULT_ATTEMPTS', 'sms'),
    rateLimit: int('HERMOD_IM_RATE_LIMIT', 100, 0, 100),
    defaultTimeoutMs: imTimeout('HERMOD_IM_DEFAULT_TIMEOUT', '24h'),
  };
  config.shortLinkBase = str('HERMOD_SHORT_LINK_BASE', `https://localhost:${config.httpsPort}/l`);
  if (!config.grpcTls && !isLoopbackAddress(config.coreAddress)) {
    // Anything that reaches core's gRPC can act as any application: beyond this machine, roles prove who they are.
    throw new ConfigError(
      `HERMOD_CORE_ADDRESS ${config.coreAddress} is not a loopback address, so roles must authenticate each other: set ${GRPC_TLS_VARIABLES.join(', ')}`,
    );
  }
  checkGatewayCertificate(config);
  if (!config.admin.user || config.admin.user.includes(':')) {
    // HTTP Basic cannot carry a colon in the user name.
    throw new ConfigError(`HERMOD_ADMIN_USER must be a non-empty name without a colon, got ${JSON.stringify(config.admin.user)}`);
  }
  if (config.scheduleHorizonMs < 60_000) throw new ConfigError('HERMOD_SCHEDULE_HORIZON must be at least 1m');
  // Shorter than a carrier's resend interval would let its redeliveries through as new replies.
  if (config.moDedupWindowMs < 1000) throw new ConfigError(`HERMOD_MO_DEDUP_WINDOW must be at least 1s, got ${JSON.stringify(env.HERMOD_MO_DEDUP_WINDOW)}`);
  if (config.bootstrap && !config.bootstrap.password && !config.bootstrap.apiKey) {
    throw new ConfigError('HERMOD_BOOTSTRAP_APP needs HERMOD_BOOTSTRAP_PASSWORD or HERMOD_BOOTSTRAP_API_KEY');
  }
  return Object.freeze(config);
}

/** The carriers file when HERMOD_CARRIERS_FILE names one; otherwise the one carrier of the HERMOD_SMPP_* variables, the default route to it. */
function carriersOf(env: Env, smpp: SmppConfig): CarriersConfig {
  const file = env.HERMOD_CARRIERS_FILE;
  if (file) {
    try {
      return loadCarriersFile(path.resolve(file), env);
    } catch (err) {
      if (err instanceof CarriersFileError) throw new ConfigError(`HERMOD_CARRIERS_FILE: ${err.message}`);
      throw err;
    }
  }
  const carrier: CarrierConfig = {
    name: 'smpp',
    ...smpp,
    binds: 1,
    maxSubmitsPerSecond: 0,
    sourceTon: undefined,
    sourceNpi: undefined,
    submitIds: 'hex',
    receiptIds: 'hex',
    // One carrier has nothing to fail over to: it keeps being tried, as before.
    errorThreshold: Number.MAX_SAFE_INTEGER,
    errorCooldownMs: 0,
    simulated: undefined,
    // Ids as they were stored before carriers had names: receipts for messages sent before an upgrade still match.
    idPrefix: '',
  };
  const carriers: CarriersConfig = { file: '', carriers: [carrier], rules: [], defaultTarget: { kind: 'carrier', carriers: ['smpp'] }, ported: new Map() };
  return Object.freeze(carriers);
}

function parseOutcomes(text: string): SimulatorConfig['outcomes'] {
  const outcomes = { delivered: 0, undeliverable: 0, expired: 0, rejected: 0 };
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, weight] = part.split('=');
    if (!name || !(name in outcomes) || weight === undefined || !(Number(weight) >= 0)) {
      throw new ConfigError(`HERMOD_SMSC_OUTCOMES: bad entry ${JSON.stringify(part)} (use e.g. delivered=9,undeliverable=1)`);
    }
    outcomes[name as keyof typeof outcomes] = Number(weight);
  }
  if (Object.values(outcomes).every((w) => w === 0)) throw new ConfigError('HERMOD_SMSC_OUTCOMES: all weights are zero');
  return outcomes;
}

/**
 * `redis://[user:password@]host[:port][,host[:port]…][/0]` (or `rediss://` for TLS): the seed nodes of a
 * Redis Cluster, with one set of credentials for every node. Hosts may be names, IPv4 or `[IPv6]`; the
 * port defaults to 6379. A cluster has only database 0, so any other database is refused.
 */
export function parseRedisClusterUrl(url: string): RedisClusterConfig {
  const bad = (why: string): ConfigError => new ConfigError(`Redis Cluster URL ${JSON.stringify(redact(url))}: ${why} (use redis://host:port,host:port)`);
  const scheme = /^(rediss?):\/\//i.exec(url);
  if (!scheme) throw bad('it must start with redis:// or rediss://');
  let rest = url.slice(scheme[0].length);
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    const db = rest.slice(slash + 1);
    if (db !== '' && db !== '0') throw bad('a cluster has only database 0');
    rest = rest.slice(0, slash);
  }
  let username = '';
  let password = '';
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = userinfo.indexOf(':');
    try {
      username = decodeURIComponent(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
      password = colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : '';
    } catch {
      throw bad('its credentials are not valid percent-encoding');
    }
  }
  const nodes = rest.split(',').map((part) => {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/.exec(part.trim());
    if (!m) throw bad(`${JSON.stringify(part)} is not host:port`);
    const port = m[3] === undefined ? 6379 : Number(m[3]);
    if (port < 1 || port > 65535) throw bad(`port ${port} is out of range`);
    return { host: m[1] ?? m[2]!, port };
  });
  return { nodes, username, password, tls: scheme[1]!.toLowerCase() === 'rediss' };
}

/** Databases a Redis has unless configured otherwise (`databases 16`); one past them made ioredis use database 0 unsaid. */
const REDIS_DATABASES = 16;

/**
 * A single Redis's URL, checked where a mistake is one line at start:
 * `redis://[user:password@]host[:port][/database]` or `rediss://…`, or a
 * Unix socket's path. A bad scheme had hermod wait for ever for a Redis
 * named `redis`, a bad port fail with a stack trace, and a database past
 * those Redis has write in database 0, perhaps another deployment's.
 */
function checkRedisUrl(given: string): void {
  if (given.startsWith('/')) return;
  // `host:port` alone is a URL to ioredis too.
  const url = /^[A-Za-z0-9._-]+:\d+$/.test(given) ? `redis://${given}` : given;
  const bad = (why: string): ConfigError =>
    new ConfigError(`HERMOD_REDIS_URL ${JSON.stringify(redact(url))}: ${why} (use redis://host:port/0, rediss:// for TLS, or a Unix socket's path)`);
  if (!/^rediss?:\/\//i.test(url)) throw bad('it must start with redis:// or rediss://');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const port = /^rediss?:\/\/(?:[^@/]*@)?(?:\[[^\]]*\]|[^:/]*):(\d+)/i.exec(url)?.[1];
    throw bad(port !== undefined && Number(port) > 65535 ? `port ${port} is out of range` : 'it is not a URL');
  }
  if (!parsed.hostname) throw bad('it names no host');
  const db = parsed.pathname.replace(/^\//, '');
  if (db !== '' && !(/^\d{1,2}$/.test(db) && Number(db) < REDIS_DATABASES))
    throw bad(`database ${JSON.stringify(db)} is not one of a Redis's ${REDIS_DATABASES} (0-${REDIS_DATABASES - 1})`);
}

/** A Kafka broker as `host:port`: a port left out or out of range failed after seconds of retries, with a stack trace. */
function checkKafkaBroker(broker: string): void {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(broker);
  if (!m || Number(m[3]) < 1 || Number(m[3]) > 65535)
    throw new ConfigError(`HERMOD_KAFKA_BROKERS: ${JSON.stringify(broker)} is not host:port with a port from 1 to 65535 (e.g. kafka-0:9092)`);
}

function clusterOf(name: string, url: string): RedisClusterConfig {
  try {
    return parseRedisClusterUrl(url);
  } catch (err) {
    throw new ConfigError(`${name}: ${(err as Error).message}`);
  }
}

/** The URL without its password, fit for an error message. */
function redact(url: string): string {
  return url.replace(/\/\/([^/@]*):[^/@]*@/, '//$1:***@');
}

/**
 * The gateways' own certificate, when set: both files, readable, a certificate and its key. Read here so a
 * mistake is one line at start, once, and `hermod start` refuses it before it starts any process.
 */
function checkGatewayCertificate(config: Config): void {
  const { tlsCertFile, tlsKeyFile } = config;
  if (!tlsCertFile && !tlsKeyFile) return;
  if (!tlsCertFile || !tlsKeyFile) throw new ConfigError('HERMOD_TLS_CERT and HERMOD_TLS_KEY must be set together (unset both for a self-signed pair)');
  try {
    checkCertificateAndKey({ variable: 'HERMOD_TLS_CERT', file: tlsCertFile }, { variable: 'HERMOD_TLS_KEY', file: tlsKeyFile });
  } catch (err) {
    if (err instanceof TlsFileError) throw new ConfigError(err.message);
    throw err;
  }
}

const GRPC_TLS_VARIABLES = ['HERMOD_GRPC_TLS_CERT', 'HERMOD_GRPC_TLS_KEY', 'HERMOD_GRPC_TLS_CA'] as const;

function grpcTls(env: Env): GrpcTlsConfig | undefined {
  const [certFile, keyFile, caFile] = GRPC_TLS_VARIABLES.map((name) => env[name] ?? '');
  if (!certFile && !keyFile && !caFile) return undefined;
  if (!certFile || !keyFile || !caFile) throw new ConfigError(`${GRPC_TLS_VARIABLES.join(', ')} must be set together (mutual TLS between roles)`);
  return { certFile, keyFile, caFile };
}

/**
 * HERMOD_CORE_ADDRESS checked once, for every role: core binds it, gateways
 * and operators' commands dial it, and a typo found only when a gateway
 * first calls core looks like core being down.
 */
function coreAddressOf(address: string): string {
  const m = /^(?:\[[^\]\s]+\]|[^:\s[\]]*):(\d{1,5})$/.exec(address);
  if (!m || Number(m[1]) > 65535) throw new ConfigError(`HERMOD_CORE_ADDRESS must be host:port or [v6]:port, got ${JSON.stringify(address)}`);
  return address;
}

/** Host part of `host:port`, `[v6]:port` or a bare host. */
function hostOf(address: string): string {
  const v6 = /^\[([^\]]+)\]/.exec(address);
  if (v6) return v6[1]!;
  const colon = address.lastIndexOf(':');
  return colon > 0 && address.indexOf(':') === colon ? address.slice(0, colon) : address;
}

export function isLoopbackAddress(address: string): boolean {
  const host = hostOf(address).toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** RBM takes OAuth tokens of a service account; a real RBM (its URL set) needs the key file. */
function rcsConfig(http: Omit<HttpCarrierConfig, 'token'>, serviceAccount: string, real: boolean): RcsCarrierConfig {
  if (real && !serviceAccount)
    throw new ConfigError('HERMOD_RCS_URL points at RBM, so HERMOD_RCS_SERVICE_ACCOUNT must name the service account’s JSON key file');
  return { ...http, serviceAccount: serviceAccount ? path.resolve(serviceAccount) : '' };
}

/** A bearer token as RFC 6750 spells one (letters, digits, -._~+/, then = padding): what a scraper can send in a header. */
function metricsToken(token: string): string {
  if (token && !/^[A-Za-z0-9\-._~+/]+=*$/.test(token)) {
    throw new ConfigError('HERMOD_METRICS_TOKEN must be a bearer token: letters, digits and -._~+/ (then = padding), e.g. from `openssl rand -base64 32`');
  }
  return token;
}
