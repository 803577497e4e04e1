import { afterEach, describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { httpRequests } from '../../lib/metrics';
import { startTestGateway } from '../gateway-test-kit';

describe("the gateway's probes for an orchestrator", () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>> | undefined;
  afterEach(() => gateway?.close());

  it('answers /healthz 200 while the process serves, whatever core does', async () => {
    gateway = await startTestGateway();
    const r = await fetch(`${gateway.url}/healthz`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await r.text()).toBe('OK\n');
  });

  it('answers /readyz 200 once core answers, naming what core says of its engines', async () => {
    gateway = await startTestGateway({}, { campaigns: { health: async () => ({ ok: false, detail: 'hot state unavailable: Redis did not answer' }) } });
    const r = await fetch(`${gateway.url}/readyz`);
    expect(r.status).toBe(200);
    // An engine core shares with every gateway being down is no reason to take this gateway out of service: 503s tell the clients.
    expect(await r.text()).toBe('ready; core says: hot state unavailable: Redis did not answer\n');
  });

  it('answers /readyz 503 naming why while core cannot be reached', async () => {
    gateway = await startTestGateway(
      {},
      {
        campaigns: {
          health: async () => {
            throw new HermodError('unavailable', 'core is unavailable: connect ECONNREFUSED core.hermod.svc:50051');
          },
        },
      },
    );
    const r = await fetch(`${gateway.url}/readyz`);
    expect(r.status).toBe(503);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await r.text()).toBe('not ready: core is unavailable: connect ECONNREFUSED core.hermod.svc:50051\n');
    // Counted as the probes' own, not as the interfaces' traffic (their 5xx rate is an alert).
    const series = (await httpRequests.get()).values.filter((v) => v.labels.route === '/readyz' && v.labels.status === '503');
    expect(series.map((v) => v.labels.interface)).toEqual(['health']);
  });

  it('answers a probe other than GET or HEAD 405, and leaves the interfaces their own paths', async () => {
    gateway = await startTestGateway();
    expect((await fetch(`${gateway.url}/readyz`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${gateway.url}/healthz`, { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(`${gateway.url}/healthz/x`)).status).toBe(404);
  });
});
