import { Redis, type RedisOptions } from 'ioredis';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';

/** Where a Redis adapter connects: ioredis options or a `redis://` / `rediss://` URL. */
export type RedisConnectionOptions = RedisOptions | string;

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

/** Logs a connection's errors without repeating the same one over and over. */
export function watchErrors(client: Redis, log: Logger): void {
  let last: string | undefined;
  client.on('error', (err: Error) => {
    if (err.message === last) return;
    last = err.message;
    log.warn('redis connection error', { err });
  });
  client.on('ready', () => {
    last = undefined;
  });
}

/** Closes a connection politely, falling back to dropping it when QUIT cannot be sent. */
export async function closeRedis(client: Redis): Promise<void> {
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
