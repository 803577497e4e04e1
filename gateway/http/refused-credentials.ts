import { createHash } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import type { Logger } from '../../lib/log';
import { FifoMap } from '../../lib/fifo-map';
import { apiKeyOf, parseBasic } from '../auth';

/** Who a refused Authorization header claimed to be: an application name, an API key's fingerprint, or nothing. */
function claimed(header: string | undefined): { name?: string; apiKey?: string } {
  if (!header) return {};
  const basic = parseBasic(header);
  if (basic) return { name: basic.name.slice(0, 64) };
  if (/^Basic\s/i.test(header)) return { name: '(unreadable Basic credentials)' };
  // An API key is never logged: a fingerprint groups the tries of one key.
  return { apiKey: `sha256:${createHash('sha256').update(apiKeyOf(header)).digest('hex').slice(0, 12)}` };
}

/**
 * Logs every request answered 401: the address it came from, the interface,
 * and the application it named (an API key only by fingerprint; never a
 * password). One line per address and name a minute at most, with the count
 * of refusals since the last line, so a password-guessing client cannot
 * flood the log, and a tool such as fail2ban can still act on every source.
 */
export function refusedCredentials(log: Logger, options: { everyMs?: number; now?: () => number } = {}): Middleware {
  const everyMs = options.everyMs ?? 60_000;
  const now = options.now ?? Date.now;
  /** Per address and name: when its last line was written, and the refusals since. */
  const seen = new FifoMap<string, { at: number; since: number }>();
  const MAX_SOURCES = 10_000;
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
    } finally {
      if (ctx.status === 401) {
        const who = claimed(ctx.get('authorization') || undefined);
        const key = `${ctx.ip}\n${who.name ?? who.apiKey ?? ''}`;
        const t = now();
        const last = seen.get(key);
        if (last && t - last.at < everyMs) last.since++;
        else {
          if (last) seen.delete(key);
          else if (seen.size >= MAX_SOURCES) seen.shift();
          seen.set(key, { at: t, since: 0 });
          log.warn("refused a request's credentials", {
            remote: ctx.ip,
            interface: (ctx.state.interface as string | undefined) ?? 'none',
            path: ctx.path,
            ...(who.name !== undefined ? { application: who.name } : {}),
            ...(who.apiKey !== undefined ? { apiKey: who.apiKey } : {}),
            ...(last ? { refusedSinceLastLine: last.since } : {}),
          });
        }
      }
    }
  };
}
