import type { Context, Next } from 'koa';
import { startSpan, tracingOn } from '../../lib/tracing';

/**
 * One server span per request while tracing is on, child of the caller's
 * `traceparent` header when it sends one. Named after the matched route once
 * the router has run (`POST /rest/sms/v2/messages`), so spans group by route
 * rather than by every message id in a path. Off: one check, then next().
 */
export async function requestSpan(ctx: Context, next: Next): Promise<void> {
  if (!tracingOn()) return next();
  const incoming = ctx.get('traceparent');
  // Named by method alone until a route matched: paths of unknown routes (scanners) would make a name per request.
  const span = startSpan(ctx.method, {
    kind: 'server',
    parent: incoming || null,
    attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path, 'url.scheme': ctx.protocol },
  })!;
  try {
    await span.run(next);
  } finally {
    const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
    if (route) {
      span.setAttribute('http.route', route);
      span.updateName(`${ctx.method} ${route}`);
    }
    span.setAttribute('http.response.status_code', ctx.status);
    span.end(ctx.status >= 500 ? new Error(`answered ${ctx.status}`) : undefined);
  }
}
