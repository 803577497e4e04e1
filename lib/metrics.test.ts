import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createLogger } from './log';
import { carriesBearer, enableDefaultMetrics, serveMetrics } from './metrics';

describe('the metrics endpoint', () => {
  it('takes only the exact bearer token, in any case of the scheme, and no other kind of credential', () => {
    const token = 'q3Zb+Xw/9k_~.-Lm==';
    expect(carriesBearer(`Bearer ${token}`, token)).toBe(true);
    expect(carriesBearer(`bearer  ${token} `, token)).toBe(true);
    for (const header of [undefined, '', 'Bearer', `Bearer ${token}x`, `Bearer ${token.slice(1)}`, `Basic ${token}`, `Bearer ${token} extra`]) {
      expect(carriesBearer(header, token)).toBe(false);
    }
  });

  it('answers a scrape without the token 401 with WWW-Authenticate and no metrics, and one with it 200', async () => {
    const server = await serveMetrics({ port: 0, host: '127.0.0.1', token: 'kia-ora.tohu' }, createLogger({ test: 'metrics' }));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
      const refused = await fetch(url);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="hermod metrics"');
      expect(await refused.text()).not.toMatch(/^# HELP/m);
      const scraped = await fetch(url, { headers: { authorization: 'Bearer kia-ora.tohu' } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toMatch(/^# HELP/m);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('serves anyone when no token is set', async () => {
    const server = await serveMetrics({ port: 0, host: '127.0.0.1', token: '' }, createLogger({ test: 'metrics' }));
    try {
      expect((await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)).status).toBe(200);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("serves a role run on its own its process's start time and file limits, as README's metrics list says (trial: the start time was missing)", async () => {
    enableDefaultMetrics('worker');
    const server = await serveMetrics({ port: 0, host: '127.0.0.1', token: '' }, createLogger({ test: 'metrics' }), undefined, {
      role: 'worker',
      channels: ['sms'],
    });
    try {
      const text = await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)).text();
      const started = /^hermod_process_start_time_seconds (\d+)/m.exec(text);
      expect(started, text.slice(0, 2000)).not.toBeNull();
      expect(Math.abs(Number(started![1]) - (Date.now() - performance.now()) / 1000)).toBeLessThan(5);
      expect(text).toMatch(/^hermod_process_max_fds \d+/m);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
