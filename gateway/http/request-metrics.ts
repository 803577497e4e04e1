import type { Context, Next } from 'koa';
import { httpDuration, httpRequests } from '../../lib/metrics';

/**
 * The 5xx answers an outage gives (a fault of ours, core away, core not
 * answering in time), counted from 0 once a route has answered anything: a
 * counter series made by its first 503 starts at its value, which
 * Prometheus's rate() and increase() do not see as a rise (an outage of 412
 * 503s read as 57, under HermodHttp5xxRate's threshold).
 */
const OUTAGE_STATUSES = ['500', '503', '504'];
/** Interface, route and method seen, bounded (the method is the client's word). */
const seen = new Set<string>();
const MAX_SEEN = 10_000;

/** Counts and times every request by interface, matched route and status. */
export async function requestMetrics(ctx: Context, next: Next): Promise<void> {
  const start = process.hrtime.bigint();
  try {
    await next();
  } finally {
    const labels = {
      interface: (ctx.state.interface as string | undefined) ?? 'none',
      route: (ctx.state.route as string | undefined) ?? (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched',
      method: ctx.method,
      status: String(ctx.status),
    };
    httpRequests.inc(labels);
    httpDuration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    const key = `${labels.interface} ${labels.route} ${labels.method}`;
    if (!seen.has(key) && seen.size < MAX_SEEN) {
      seen.add(key);
      for (const status of OUTAGE_STATUSES) if (status !== labels.status) httpRequests.inc({ ...labels, status }, 0);
    }
  }
}
