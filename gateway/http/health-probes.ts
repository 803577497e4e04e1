import type { Context, Next } from 'koa';
import type { CampaignsClient } from '../campaigns-client';

/**
 * An orchestrator's probes, outside the four interfaces: `/healthz` answers
 * 200 while the process serves requests (liveness), `/readyz` 200 once core
 * answers this gateway's health call, and 503 naming why while it cannot be
 * reached (readiness: the gateway's own link to core). What core says of
 * its engines (history, hot state) is told in the body but does not make a
 * gateway unready: every gateway shares them, and a client is better told so
 * by a 503 with Retry-After than by a load balancer with no gateway left.
 * Campaign Manager's `/healthz` (SPEC) is the engines' check.
 */
export function healthProbes(campaigns: Pick<CampaignsClient, 'health'>) {
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== '/healthz' && ctx.path !== '/readyz') return next();
    // Counted apart from the interfaces' traffic: an orchestrator's 503s while core is away are no client's 5xx.
    ctx.state.interface = 'health';
    ctx.state.route = ctx.path;
    ctx.type = 'text/plain';
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      ctx.body = 'GET or HEAD\n';
      return;
    }
    if (ctx.path === '/healthz') {
      ctx.status = 200;
      ctx.body = 'OK\n';
      return;
    }
    try {
      const health = await campaigns.health();
      ctx.status = 200;
      ctx.body = health.ok ? 'ready\n' : `ready; core says: ${health.detail}\n`;
    } catch (err) {
      ctx.status = 503;
      ctx.body = `not ready: ${err instanceof Error ? err.message : String(err)}\n`;
    }
  };
}
