import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisClusterConfig } from '../../lib/config';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';

/** Where a Redis adapter connects: ioredis options or a `redis://` / `rediss://` URL. */
export type RedisConnectionOptions = RedisOptions | string;

/** A single Redis as above, or a Redis Cluster by its seed nodes. */
export type RedisTarget = RedisConnectionOptions | { cluster: RedisClusterConfig };

/** A connection to one Redis or to a whole cluster; both speak the same commands. */
export type RedisClient = Redis | Cluster;

/**
 * Opens a single connection or a cluster client, per `target`. A cluster
 * client routes each command to the master of its key's hash slot and
 * follows failovers (MOVED) by itself; with auto-pipelining it gathers
 * concurrent commands into one pipeline per node.
 */
export function openRedisClient(target: RedisTarget, overrides: RedisOptions & { enableAutoPipelining?: boolean }, log: Logger): RedisClient {
  if (typeof target === 'string' || !('cluster' in target)) return openRedis(target, overrides, log);
  const { nodes, username, password, tls } = target.cluster;
  const { enableAutoPipelining, ...redisOptions } = overrides;
  const client = new Cluster(
    nodes.map((n) => ({ host: n.host, port: n.port })),
    {
      enableAutoPipelining,
      redisOptions: { ...redisOptions, username: username || undefined, password: password || undefined, ...(tls ? { tls: {} } : {}) },
      // With TLS the certificates name the hosts, so connect by name rather than by the address it resolves to.
      ...(tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
    },
  );
  watchErrors(client, log, nodes.map((n) => `${n.host}:${n.port}`).join(','));
  return client;
}

/**
 * Sends one command per entry together (auto-pipelined) and resolves with
 * their results in order, or rejects with the first error. On a cluster,
 * commands answered with a redirection (a slot moved by a failover or a
 * resharding, or the cluster briefly down) were not run, so they are sent
 * again once the client has re-read the slot map: ioredis retries an
 * auto-pipeline only when every command in it got the very same redirection,
 * which commands on several slots never do.
 */
export async function sendAll<T>(client: RedisClient, commands: readonly (() => Promise<T>)[]): Promise<T[]> {
  if (!(client instanceof Cluster)) return Promise.all(commands.map((send) => send()));
  const settled = await Promise.allSettled(commands.map((send) => send()));
  for (let attempt = 1; attempt <= REDIRECT_RETRIES; attempt++) {
    const redirected = settled.flatMap((s, i) => (s.status === 'rejected' && isRedirection(s.reason) ? [i] : []));
    if (redirected.length === 0) break;
    await new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()));
    await new Promise((resolve) => setTimeout(resolve, REDIRECT_DELAY_MS * attempt));
    // Re-sent in their original order, in one turn, so one key's commands stay in order.
    const again = await Promise.allSettled(redirected.map((i) => commands[i]!()));
    redirected.forEach((i, j) => {
      settled[i] = again[j]!;
    });
  }
  return settled.map((s) => {
    if (s.status === 'rejected') throw s.reason;
    return s.value;
  });
}

const REDIRECT_RETRIES = 5;
const REDIRECT_DELAY_MS = 100;

/** A reply saying the command was not run here (RESP errors start with their code). */
function isRedirection(err: unknown): boolean {
  return err instanceof Error && /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /.test(err.message);
}

/**
 * Blocks until `replicas` replicas hold every write this client has sent to
 * the masters of `keys` (Redis WAIT, on the very connection that carried the
 * writes, since WAIT counts that connection's writes). On a cluster, a slot
 * whose shard lists fewer replicas (one lost to a failover and not yet
 * replaced) needs only those it has, so the shard keeps taking writes.
 * Throws `unavailable` when the replicas do not confirm in `timeoutMs`.
 */
export async function waitForReplicas(client: RedisClient, keys: Iterable<string>, replicas: number, timeoutMs: number): Promise<void> {
  if (replicas <= 0) return;
  if (!(client instanceof Cluster)) {
    const confirmed = Number(await client.call('WAIT', replicas, timeoutMs));
    if (confirmed < replicas) throw new HermodError('unavailable', `only ${confirmed} of ${replicas} Redis replicas confirmed a write within ${timeoutMs} ms`);
    return;
  }
  // Master node key ("host:port") -> replicas wanted there.
  const wanted = new Map<string, number>();
  for (const key of keys) {
    const owners = client.slots[hashSlot(key)];
    if (!owners || owners.length === 0) throw new HermodError('unavailable', 'the Redis Cluster topology is not known yet');
    wanted.set(owners[0]!, Math.max(wanted.get(owners[0]!) ?? 0, Math.min(replicas, owners.length - 1)));
  }
  const masters = client.nodes('master');
  await Promise.all(
    [...wanted].map(async ([nodeKey, count]) => {
      if (count === 0) return;
      const node = masters.find((m) => `${m.options.host}:${m.options.port}` === nodeKey);
      if (!node) throw new HermodError('unavailable', `Redis Cluster node ${nodeKey} is not connected`);
      const confirmed = Number(await node.call('WAIT', count, timeoutMs));
      if (confirmed < count)
        throw new HermodError(
          'unavailable',
          `only ${confirmed} of ${count} replicas of Redis Cluster node ${nodeKey} confirmed a write within ${timeoutMs} ms`,
        );
    }),
  );
}

/**
 * The cluster hash slot of a key (CRC16/XMODEM mod 16384 of the key, or of
 * the part inside its first non-empty `{…}`), as Redis computes it. Works on
 * the key's UTF-8 bytes, like Redis.
 */
export function hashSlot(key: string): number {
  let bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff]!) & 0xffff;
  return crc & 0x3fff;
}

const CRC16_TABLE = Array.from({ length: 256 }, (_, n) => {
  let crc = n << 8;
  for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/**
 * Opens one ioredis connection with `overrides` applied on top of the caller's
 * options. Connection errors are logged (once per distinct message in a row,
 * so a reconnect loop does not flood the log) instead of surfacing as
 * unhandled 'error' events; commands still fail or wait per ioredis' retry
 * settings.
 */
export function openRedis(connection: RedisConnectionOptions, overrides: RedisOptions, log: Logger): Redis {
  const client = typeof connection === 'string' ? new Redis(connection, overrides) : new Redis({ ...connection, ...overrides });
  watchErrors(client, log);
  return client;
}

/** How often a process whose connections keep failing says it is still waiting. */
const STILL_WAITING_EVERY_MS = 5000;

/** The process's connections waiting for one Redis, and the reminder that speaks for them all (in the first one's log). */
interface Waiting {
  clients: Map<RedisClient, Error>;
  since: number;
  reminder: NodeJS.Timeout;
}
const byAddress = new Map<string, Waiting>();

/** Counts the client among those waiting for `address`; the first one starts the reminder. */
function startWaiting(client: RedisClient, err: Error, log: Logger, address: string): void {
  const known = byAddress.get(address);
  if (known) {
    known.clients.set(client, err);
    return;
  }
  const waiting: Waiting = {
    clients: new Map([[client, err]]),
    since: Date.now(),
    reminder: setInterval(() => {
      for (const c of waiting.clients.keys()) if (c.status === 'ready' || c.status === 'end') waiting.clients.delete(c);
      if (waiting.clients.size === 0) return stopWaiting(undefined, address);
      log.warn('still waiting for Redis', {
        redis: address,
        waitingSeconds: Math.round((Date.now() - waiting.since) / 1000),
        connections: waiting.clients.size,
        err: [...waiting.clients.values()].at(-1),
      });
    }, STILL_WAITING_EVERY_MS).unref(),
  };
  byAddress.set(address, waiting);
}

/** The client is connected or closed (undefined: every one is); the reminder stops with the last. */
function stopWaiting(client: RedisClient | undefined, address: string): void {
  const waiting = byAddress.get(address);
  if (!waiting) return;
  if (client) waiting.clients.delete(client);
  if (client && waiting.clients.size > 0) return;
  clearInterval(waiting.reminder);
  byAddress.delete(address);
}

/**
 * Logs a connection's errors, naming the Redis it is for (never its password),
 * each distinct one once; while it stays unconnected, `still waiting for
 * Redis` every 5 s with how long, so a process waiting for Redis at start or
 * after losing it says why rather than falling silent (ioredis keeps
 * reconnecting meanwhile, and repeats an error only now and then): one line
 * for all of a process's connections to that Redis (core holds several), with
 * how many wait; and, once connected again, that it is.
 */
export function watchErrors(client: RedisClient, log: Logger, address = addressOf(client)): void {
  let last: Error | undefined;
  let failingSince: number | undefined;
  client.on('error', (err: Error) => {
    failingSince ??= Date.now();
    if (err.message !== last?.message) log.warn('redis connection error', { redis: address, err });
    last = err;
    startWaiting(client, err, log, address);
  });
  client.on('ready', () => {
    stopWaiting(client, address);
    if (failingSince !== undefined) log.info('connected to Redis', { redis: address, waitedSeconds: Math.round((Date.now() - failingSince) / 1000) });
    last = undefined;
    failingSince = undefined;
  });
  client.on('end', () => stopWaiting(client, address));
  if (client instanceof Cluster) watchNodes(client, log);
}

/**
 * A cluster's own errors say little of its nodes: a master that died shows as
 * the node leaving the client's slot map once the cluster failed it over
 * (`-node`), and as its connection's errors where the client meets them
 * (`node error`), each said once per node and error, so an operator sees
 * which node died and when.
 */
function watchNodes(cluster: Cluster, log: Logger): void {
  const failing = new Map<string, string>();
  /** Nodes said to have left, and the timer that says one is back once it has stayed in the map a while. */
  const gone = new Map<string, NodeJS.Timeout | undefined>();
  const addressOfNode = (node: Redis): string => `${node.options.host}:${node.options.port}`;
  const closing = (): boolean => cluster.status === 'disconnecting' || cluster.status === 'close' || cluster.status === 'end';
  cluster.on('node error', (err: Error, address: string) => {
    if (closing() || failing.get(address) === err.message) return;
    failing.set(address, err.message);
    log.warn('redis node error', { redis: address, err });
  });
  // While the cluster fails a node over, the slot maps its nodes answer disagree for a moment: the node leaves and
  // comes back many times a second. It is said to leave once, and to be back once it stayed NODE_BACK_AFTER_MS.
  cluster.on('-node', (node: Redis) => {
    if (closing()) return;
    const address = addressOfNode(node);
    if (gone.has(address)) {
      clearTimeout(gone.get(address));
      gone.set(address, undefined);
      return;
    }
    gone.set(address, undefined);
    log.warn('redis node left the cluster map', { redis: address, ...(failing.has(address) ? { err: failing.get(address) } : {}) });
  });
  cluster.on('+node', (node: Redis) => {
    const address = addressOfNode(node);
    if (!gone.has(address)) return;
    clearTimeout(gone.get(address));
    const timer = setTimeout(() => {
      gone.delete(address);
      failing.delete(address);
      if (!closing()) log.info('redis node back in the cluster map', { redis: address });
    }, NODE_BACK_AFTER_MS);
    timer.unref();
    gone.set(address, timer);
  });
}

const NODE_BACK_AFTER_MS = 10_000;

/** host:port of a single Redis; a cluster's seed nodes are named where it is opened. */
function addressOf(client: RedisClient): string {
  return client instanceof Redis ? `${client.options.host}:${client.options.port}` : 'the Redis Cluster';
}

/** ioredis's error for a command whose answer did not come within `commandTimeout`. */
export function isCommandTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === 'Command timed out';
}

/**
 * Says that Redis stalls (commands not answered within `timeoutMs` on a
 * connection that stays open, so no connection error says it): at once, then
 * at most every STILL_WAITING_EVERY_MS with how many commands timed out
 * meanwhile.
 */
export function stallWarning(log: Logger, timeoutMs: number, now: () => number = Date.now): () => void {
  let saidAt = Number.NEGATIVE_INFINITY;
  let since = 0;
  return () => {
    since += 1;
    if (now() - saidAt < STILL_WAITING_EVERY_MS) return;
    log.warn('redis did not answer in time', { timeoutMs, commands: since });
    saidAt = now();
    since = 0;
  };
}

/** Closes a connection politely, falling back to dropping it when QUIT cannot be sent. */
export async function closeRedis(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  try {
    await client.quit();
  } catch {
    client.disconnect();
  }
}

/** Wraps a failed Redis call as a retryable port error. */
export function unavailable(what: string, cause: unknown): HermodError {
  if (cause instanceof HermodError) return cause;
  const message = cause instanceof Error ? cause.message : String(cause);
  return new HermodError('unavailable', `${what}: ${message}`, { cause });
}

/** The results of a pipeline, throwing the first command error (or a lost connection) as `unavailable`. */
export function pipelineResults(what: string, results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw new HermodError('unavailable', `${what}: the pipeline was discarded`);
  return results.map(([err, value]) => {
    if (err) throw unavailable(what, err);
    return value;
  });
}
