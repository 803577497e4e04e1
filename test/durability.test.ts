import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSmscSimulator } from '../workers/simulators/smsc-simulator';
import { createClient } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';

// The two run side by side: the scheduled message's test mostly waits for its time.
describe.concurrent('durability: nothing answered 202 is lost', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
  });

  it('delivers 1,000 messages accepted while the carrier was unreachable, after kill -9 of every hermod process and a restart', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-durability-'));
    const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20 });
    const { port: smscPort } = await simulator.start();
    simulator.refuse(true);
    cleanup.push(() => simulator.stop());
    const env = { HERMOD_SMSC_SIMULATOR: 'false', HERMOD_SMPP_PORT: String(smscPort), HERMOD_SMPP_RECONNECT_MAX: '500ms' };

    let hermod: HermodProcess = await startHermod({ dataDir, env });
    let client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    const ids: string[] = [];
    for (let i = 0; i < 1000; i += 50) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          client.post('/rest/sms/v2/messages', { destination: `+64210${String(i + j).padStart(5, '0')}`, content: `Kia ora ${i + j} — 你好 👋🏽` }),
        ),
      );
      for (const r of replies) {
        expect(r.status).toBe(202);
        ids.push(r.json.id);
      }
    }
    expect(simulator.submitCount).toBe(0);
    client.close();
    await hermod.kill9();

    simulator.refuse(false);
    hermod = await startHermod({ dataDir, env });
    cleanup.push(() => hermod.stop());
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    cleanup.push(async () => client.close());

    const delivered = new Set<string>();
    await eventually(
      async () => {
        // The ones not delivered yet, 50 requests at a time (one at a time, a pass over 1,000 takes seconds).
        const pending = ids.filter((id) => !delivered.has(id));
        for (let i = 0; i < pending.length; i += 50) {
          await Promise.all(
            pending.slice(i, i + 50).map(async (id) => {
              const r = await client.get(`/rest/sms/v2/messages?id=${id}`);
              expect(r.status).toBe(200);
              if (r.json.status === 'received') delivered.add(id);
            }),
          );
        }
        return delivered.size === ids.length ? true : undefined;
      },
      60_000,
      250,
    );
    expect(delivered.size).toBe(1000);
    expect(simulator.submitCount).toBeGreaterThanOrEqual(1000);
    // Core listened before it had handed the 1,000 over again: a large backlog no longer keeps the gateways answering 503.
    const lines = hermod
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; count?: number });
    const recovered = lines.findIndex((l) => l.msg === 're-dispatched unfinished messages');
    expect(lines[recovered]?.count).toBe(1000);
    expect(lines.findIndex((l) => l.msg === 'core listening')).toBeLessThan(recovered);
  });

  it('sends a scheduled message at its time, not before and within a second after, across a restart in between, having waited on disk until it came within the memory window', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-schedule-'));
    const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20 });
    const { port } = await simulator.start();
    cleanup.push(() => simulator.stop());
    const submittedAt = new Map<string, number>();
    simulator.on('submit', (s: { text: string }) => submittedAt.set(s.text, Date.now()));
    // Held in memory only once due within 5 s: until then it waits in a file of the data directory.
    const env = { HERMOD_SMSC_SIMULATOR: 'false', HERMOD_SMPP_PORT: String(port), HERMOD_GATEWAYS: '1', HERMOD_SCHEDULER_MEMORY_WINDOW: '5s' };
    const waitingOnDisk = () => fs.readdirSync(path.join(dataDir, 'scheduled')).length;

    let hermod = await startHermod({ dataDir, env });
    let client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    // Far enough ahead that a stop and a start on a loaded CI machine (34 s seen) still end before it.
    const due = Date.now() + 45_000;
    const sent = await client.post('/rest/sms/v2/messages', {
      destination: '+6427000001',
      content: 'Āpōpō — завтра, 明天 ⏰',
      scheduled: new Date(due).toISOString(),
    });
    expect(sent.status).toBe(202);
    // Handed to the scheduler just after the 202.
    await eventually(() => waitingOnDisk() === 1, 5000);
    client.close();
    expect(await hermod.stop()).toBe(0);

    hermod = await startHermod({ dataDir, env });
    cleanup.push(() => hermod.stop());
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    cleanup.push(async () => client.close());
    expect(Date.now()).toBeLessThan(due);
    // Read back before its time, unless a loaded machine took so long to restart that the read could cross it.
    if (Date.now() < due - 2000) expect((await client.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json.status).toBe('queued');
    // Recovery put it back on disk. Its file holds a 5 s bucket of schedule (the window, being under a minute),
    // read into memory once the bucket's start is within the window: as early as 10 s before its time.
    if (Date.now() < due - 10_500) expect(waitingOnDisk()).toBe(1);
    await eventually(() => waitingOnDisk() === 0, due - Date.now() + 5000);

    await eventually(async () => (submittedAt.has('Āpōpō — завтра, 明天 ⏰') ? true : undefined), 30_000, 50);
    const at = submittedAt.get('Āpōpō — завтра, 明天 ⏰')!;
    expect(at).toBeGreaterThanOrEqual(due);
    expect(at - due).toBeLessThan(1000);
  });
});
