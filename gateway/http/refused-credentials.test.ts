import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../lib/log';
import { refusedCredentials } from './refused-credentials';

describe('refused credentials', () => {
  let server: http.Server | undefined;
  afterEach(() => server?.close());

  /** A gateway-like app that refuses every password but `secret`, with the log lines it wrote. */
  const start = async (now: () => number) => {
    const lines: { msg: string; fields: Record<string, unknown> }[] = [];
    const warn = (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, fields: fields ?? {} });
    const log = { debug: () => undefined, info: () => undefined, warn, error: warn, child: () => log } as unknown as Logger;
    const app = new Koa();
    app.use(refusedCredentials(log, { now }));
    app.use((ctx) => {
      ctx.state.interface = 'sms_v2';
      const ok = ctx.get('authorization') === `Basic ${Buffer.from('whānau:secret').toString('base64')}`;
      ctx.status = ok ? 200 : 401;
      ctx.body = ok ? 'ok' : { statusCode: 401 };
    });
    server = http.createServer(app.callback());
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rest/sms/v2/messages`;
    const call = (authorization?: string) => fetch(url, { headers: authorization ? { authorization } : {} }).then((r) => r.status);
    return { lines, call };
  };
  const basic = (name: string, password: string) => `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

  it('logs a wrong password with the address and the application named, never the password', async () => {
    const { lines, call } = await start(() => 1_000);
    expect(await call(basic('whānau', 'hunter2'))).toBe(401);
    expect(await call(basic('whānau', 'secret'))).toBe(200);

    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toBe("refused a request's credentials");
    expect(lines[0]!.fields).toMatchObject({ remote: '127.0.0.1', interface: 'sms_v2', path: '/rest/sms/v2/messages', application: 'whānau' });
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });

  it('names an API key only by a short fingerprint of it, never the key', async () => {
    const { lines, call } = await start(() => 1_000);
    await call('Bearer key-one-x9');
    await call('ApiKey key-two');
    expect(lines.map((l) => l.fields.apiKey)).toEqual([expect.stringMatching(/^sha256:[0-9a-f]{12}$/), expect.stringMatching(/^sha256:[0-9a-f]{12}$/)]);
    expect(lines[0]!.fields.apiKey).not.toBe(lines[1]!.fields.apiKey);
    expect(JSON.stringify(lines)).not.toContain('key-one');
  });

  it('writes one line a minute for a client guessing passwords, and then says how many it refused meanwhile', async () => {
    let t = 1_000;
    const { lines, call } = await start(() => t);
    for (let i = 0; i < 50; i++) expect(await call(basic('acme', `guess-${i}`))).toBe(401);
    // Another application named from the same address still gets its own line.
    await call(basic('other', 'x'));
    expect(lines.map((l) => l.fields.application)).toEqual(['acme', 'other']);

    t += 60_000;
    await call(basic('acme', 'guess-50'));
    expect(lines).toHaveLength(3);
    expect(lines[2]!.fields).toMatchObject({ application: 'acme', refusedSinceLastLine: 49 });
  });

  it('logs a request without credentials too', async () => {
    const { lines, call } = await start(() => 1_000);
    expect(await call()).toBe(401);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).not.toHaveProperty('application');
  });
});
