import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { createClient, readReply, type Reply } from './support/https-client';
import { startHermod } from './support/hermod-process';

/**
 * systemd (KillMode=control-group, its default), `kill -- -PGID` and a
 * terminal's job control send SIGTERM to every process of the service at
 * once, not to the supervisor alone: hermod must still stop in its own
 * order, the gateways first, letting requests in flight finish.
 */
describe('SIGTERM sent to the whole process group', () => {
  it('lets an upload in flight finish with 201, and every role stops through the supervisor', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-group-term-'));
    const hermod = await startHermod({ dataDir });
    const members = Array.from({ length: 3000 }, (_, i) => ({ destination: `+6421990${String(i).padStart(4, '0')}`, param1: 'Hēmi — 你好 🌿' }));
    const body = Buffer.from(JSON.stringify({ name: 'rārangi puhoi — 慢', members }), 'utf8');
    const answer = new Promise<Reply>((resolve, reject) => {
      const req = https.request(new URL('/rest/campaign_manager/v1/acme/lists', hermod.baseUrl), {
        method: 'POST',
        ca: hermod.ca(),
        headers: {
          authorization: `Basic ${Buffer.from('acme:secret').toString('base64')}`,
          'content-type': 'application/json',
          'content-length': String(body.length),
        },
      });
      req.on('response', (res) => readReply(res, resolve));
      req.on('error', reject);
      // The body goes in ten pieces over a second and a half; the signal comes after the first.
      const pieces = 10;
      const size = Math.ceil(body.length / pieces);
      let sent = 0;
      const next = (): void => {
        req.write(body.subarray(sent * size, (sent + 1) * size));
        if (++sent < pieces) setTimeout(next, 150);
        else req.end();
      };
      next();
    });
    await new Promise((r) => setTimeout(r, 200));
    const exited = new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        try {
          process.kill(hermod.pid, 0);
        } catch {
          clearInterval(timer);
          resolve();
        }
      }, 50);
    });
    process.kill(-hermod.pid, 'SIGTERM');

    const reply = await answer;
    expect(reply.status, reply.text).toBe(201);
    await exited;
    const lines = hermod
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; role?: string; reason?: string });
    const stops = lines.filter((l) => l.msg === 'stopping');
    expect(stops.length).toBeGreaterThan(0);
    for (const s of stops) expect(s.reason, JSON.stringify(s)).toBe('supervisor');
    // The roles got the signal too, and the supervisor saw it was the group's: no role was taken for one sent SIGTERM alone.
    expect(lines.some((l) => l.msg.startsWith('a role was sent SIGTERM alone'))).toBe(false);
    // Every role that said it was stopping says it stopped, once: an operator reading the log knows none was cut short.
    const roles = new Set(stops.map((s) => s.role));
    expect(roles.has('gateway') && roles.has('core')).toBe(true);
    for (const role of roles) expect(lines.filter((l) => l.msg === 'stopped' && l.role === role).length, `${role} stopped`).toBeGreaterThan(0);
    expect(lines.filter((l) => l.msg === 'core stopped')).toHaveLength(0);
    expect(lines.some((l) => l.msg === 'hermod stopped')).toBe(true);
  }, 60_000);
});

describe('SIGTERM sent to one role alone', () => {
  it('stops that role gracefully, the supervisor starts it again, and hermod takes sends after', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-role-term-'));
    const hermod = await startHermod({ dataDir });
    const client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    try {
      const logLines = () =>
        hermod
          .output()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg: string; role?: string; reason?: string; pid?: number });
      const core = logLines().find((l) => l.role === 'core' && l.pid !== undefined)!.pid!;
      process.kill(core, 'SIGTERM');
      // Stopped as the supervisor stops it (flushing its work), then a new core.
      await eventually(() => (logLines().some((l) => l.role === 'core' && l.pid !== core && l.msg === 'core listening') ? true : undefined), 30_000);
      const lines = logLines();
      expect(lines.some((l) => l.msg === 'stopping' && l.pid === core && l.reason === 'supervisor')).toBe(true);
      expect(lines.some((l) => l.msg === 'process died; restarting')).toBe(false);
      expect(lines.some((l) => l.msg === 'hermod stopped')).toBe(false);
      const sent = await eventually(async () => {
        const r = await client.post('/rest/sms/v2/messages', { destination: '+6421000007', content: 'Kei te pai — 谢谢 👍🏽' });
        return r.status === 202 ? r : undefined;
      }, 20_000);
      expect(sent.json.id).toBeTruthy();
    } finally {
      client.close();
      await hermod.stop();
    }
  }, 90_000);
});

describe('SIGTERM to the supervisor alone while a role it restarted is still starting', () => {
  it('stops hermod once that role has started, instead of waiting on it for good', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-term-starting-'));
    const hermod = await startHermod({ dataDir });
    const lines = () =>
      hermod
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; role?: string; pid?: number });
    try {
      const core = lines().find((l) => l.role === 'core' && l.pid !== undefined)!.pid!;
      process.kill(core, 'SIGKILL');
      await eventually(() => (lines().some((l) => l.msg === 'process died; restarting' && l.role === 'core') ? true : undefined), 10_000, 10);
      // The supervisor forks a new core a second later; the signal comes while it opens its data (chDB, the journal).
      await new Promise((r) => setTimeout(r, 1150));
      expect(lines().some((l) => l.role === 'core' && l.pid !== core && l.msg === 'core listening')).toBe(false);
      const stopped = hermod.stop();
      const outcome = await Promise.race([stopped.then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still waiting'), 30_000))]);
      expect(outcome).toBe('stopped');
      expect(lines().some((l) => l.msg === 'hermod stopped')).toBe(true);
    } finally {
      await hermod.kill9();
    }
  }, 60_000);
});

describe('SIGTERM while clients keep sending on kept-alive connections', () => {
  it('answers the sends on their way and stops well within its grace, with no request cut off', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-term-keepalive-'));
    const hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1', HERMOD_SHUTDOWN_GRACE: '20s' } });
    const agent = new https.Agent({ ca: hermod.ca(), keepAlive: true, maxSockets: 4 });
    const body = JSON.stringify({ destination: '+6421000042', content: 'Kia ora, e hoa mā — 你好 👋🏽' });
    /** `secured`: the request's connection was past its TLS handshake (so the request could go out on it). */
    const outcomes: { status?: number; error?: string; reused: boolean; secured: boolean }[] = [];
    let exitedAt = 0;
    const send = (): Promise<void> =>
      new Promise((resolve) => {
        const req = https.request(new URL('/rest/sms/v2/messages', hermod.baseUrl), {
          method: 'POST',
          agent,
          headers: { authorization: `Basic ${Buffer.from('acme:secret').toString('base64')}`, 'content-type': 'application/json' },
        });
        let secured = false;
        req.on('socket', (socket) => {
          if (req.reusedSocket) secured = true;
          else socket.once('secureConnect', () => (secured = true));
        });
        req.on('response', (res) =>
          readReply(res, (reply) => {
            outcomes.push({ status: reply.status, reused: req.reusedSocket, secured });
            resolve();
          }),
        );
        req.on('error', (err: NodeJS.ErrnoException) => {
          outcomes.push({ error: err.code ?? err.message, reused: req.reusedSocket, secured });
          // Refused, or reset before its TLS handshake (the cluster's primary had taken the connection as the gateway
          // stopped listening): nothing was sent. A client goes on to another address; here, a moment's pause.
          setTimeout(resolve, 20);
        });
        req.end(body);
      });
    // Four clients, each sending the next as soon as the last is answered, until hermod has exited.
    const clients = Array.from({ length: 4 }, async () => {
      while (!exitedAt) await send();
    });
    await eventually(() => (outcomes.filter((o) => o.status === 202).length >= 40 ? true : undefined), 30_000);
    const signalledAt = Date.now();
    await hermod.stop();
    exitedAt = Date.now();
    await Promise.all(clients);
    agent.destroy();

    const lines = hermod
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; role?: string });
    expect(lines.filter((l) => l.msg === 'stop took too long; exiting')).toEqual([]);
    expect(lines.some((l) => l.msg === 'hermod stopped')).toBe(true);
    expect(exitedAt - signalledAt).toBeLessThan(20_000);
    // Every answer is a 202 (the unit test of gateway/http/closing-server.ts shows the last ones say Connection: close).
    expect(outcomes.filter((o) => o.status !== undefined && o.status !== 202)).toEqual([]);
    // No request was cut off half-way. A reused connection closed just as its next request went out is the one
    // reset HTTP allows (clients send such a request again); any other failure is of a new connection before it
    // carried anything: refused, or reset before its TLS handshake.
    expect(outcomes.filter((o) => o.error !== undefined && o.error !== 'ECONNREFUSED' && o.secured && !o.reused)).toEqual([]);
  }, 90_000);
});

describe('SIGTERM to the supervisor while core cannot run at all (stopped, or thrashing at its heap limit)', () => {
  it('kills core a little after its grace and stops, instead of waiting on it for good', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-term-frozen-'));
    const hermod = await startHermod({ dataDir, env: { HERMOD_SHUTDOWN_GRACE: '2s' } });
    const lines = () =>
      hermod
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; role?: string; pid?: number });
    const core = lines().find((l) => l.role === 'core' && l.pid !== undefined)!.pid!;
    try {
      // As a core at its heap limit: it runs nothing, not even its own stop timer.
      process.kill(core, 'SIGSTOP');
      const started = Date.now();
      const stopped = hermod.stop();
      const outcome = await Promise.race([stopped.then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still waiting'), 30_000))]);
      expect(outcome).toBe('stopped');
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(lines().some((l) => l.msg === 'role did not stop within its grace; killing it' && l.role === 'core')).toBe(true);
      expect(() => process.kill(core, 0)).toThrow();
    } finally {
      try {
        process.kill(core, 'SIGKILL');
      } catch {
        // gone
      }
      await hermod.kill9();
    }
  }, 60_000);
});
