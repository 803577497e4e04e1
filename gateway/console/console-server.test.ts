import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { createLogger } from '../../lib/log';
import type { ConsoleClient } from './console-client';
import { createConsoleServer } from './console-server';

const USER = 'kaiwhakahaere';
const PASSWORD = 'kupuhipa-ā-🔑';

describe('the operator console while core is unavailable', () => {
  let server: ReturnType<typeof createConsoleServer>;
  let base: string;
  beforeAll(async () => {
    const client = new Proxy({} as ConsoleClient, {
      get: () => () => Promise.reject(new HermodError('unavailable', 'core is unavailable')),
    });
    server = createConsoleServer({ user: USER, password: PASSWORD, client, log: createLogger({ test: 'console' }) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers 503 saying how many seconds to wait before asking again', async () => {
    const res = await fetch(`${base}/api/messages/${encodeURIComponent('ōrite-42')}`, {
      headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: { code: 'unavailable', message: 'core is unavailable' } });
    expect(res.headers.get('retry-after')).toBe('5');
  });
});
