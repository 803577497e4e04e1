import type { Context, Next } from 'koa';
import { httpDuration, httpRequests } from '../../lib/metrics';

/** Counts and times every request by interface, matched route and status. */
export async function requestMetrics(ctx: Context, next: Next): Promise<void> {
  const start = process.hrtime.bigint();
  try {
    await next();
  } finally {
    const labels = {
      interface: (ctx.state.interface as string | undefined) ?? 'none',
      route: (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched',
      method: ctx.method,
      status: String(ctx.status),
    };
    httpRequests.inc(labels);
    httpDuration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
  }
}
