import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { httpRequests } from '../../lib/metrics';
import { requestMetrics } from './request-metrics';

/** A request through requestMetrics answered with `status`, on a route as the router names it. */
async function answer(route: string, status: number): Promise<void> {
  const app = new Koa();
  const ctx = app.createContext({ method: 'POST', url: '/rest/sms/v2/messages', headers: {}, socket: {} } as never, {} as never);
  ctx.state.interface = 'sms-v2';
  (ctx as unknown as { _matchedRoute: string })._matchedRoute = route;
  await requestMetrics(ctx, async () => {
    ctx.status = status;
  });
}

const series = async (route: string) =>
  Object.fromEntries(
    (await httpRequests.get()).values.filter((v) => v.labels.route === route && v.labels.method === 'POST').map((v) => [String(v.labels.status), v.value]),
  );

describe('HTTP request counts', () => {
  it('counts a route’s 500, 503 and 504 from 0 once it has answered anything, so an outage’s first 503s are a rise Prometheus sees', async () => {
    const route = '/rest/sms/v2/messages-metrics-test';
    await answer(route, 202);
    // A series made by its first 503 starts at its value: rate() and increase() took 412 503s as 57.
    expect(await series(route)).toEqual({ '202': 1, '500': 0, '503': 0, '504': 0 });
    await answer(route, 503);
    await answer(route, 503);
    expect(await series(route)).toEqual({ '202': 1, '500': 0, '503': 2, '504': 0 });
  });
});
