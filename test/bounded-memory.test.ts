import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';
import { seriesSum, sumsBy } from './support/metric-samples';

const MESSAGES = 300;
const HANDSETS = 40;
const KIA_ORA = 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好';

/** hermod_memory_entries by structure, from the service's /metrics (all its processes summed). */
async function memoryEntries(hermod: HermodProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`http://localhost:${hermod.metricsPort}/metrics`)).text();
  return Object.fromEntries(sumsBy(text, 'hermod_memory_entries', 'structure'));
}

/** Issue 14: what a running service holds in memory follows what is in flight, and a restart replays nothing flushed. */
describe('hermod start under traffic: memory holds what is in flight, not what was sent', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-bounded-'));
  const env = {
    HERMOD_SMSC_RECEIPT_DELAY: '20ms',
    HERMOD_GATEWAYS: '1',
    HERMOD_STATE_FINAL_TTL: '1s',
    HERMOD_RECENT_MESSAGES_MAX_AGE: '30s',
    HERMOD_IDEMPOTENCY_TTL: '2s',
  };
  let hermod: HermodProcess | undefined;
  let client: Client | undefined;
  const ids: string[] = [];
  /** How long the first start (an empty data directory) took: a restart's yardstick on a machine shared with other work. */
  let firstStartS = 0;

  afterAll(async () => {
    client?.close();
    if (hermod) await hermod.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it(`holds none of ${MESSAGES} messages, their carrier ids or idempotency keys once each is final and its time to live has passed`, async () => {
    const t0 = performance.now();
    hermod = await startHermod({ dataDir, env });
    firstStartS = (performance.now() - t0) / 1000;
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    for (let i = 0; i < MESSAGES; i += 50) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          client!.post(
            '/rest/sms/v2/messages',
            { destination: `+6421${String((i + j) % HANDSETS).padStart(6, '0')}`, content: `${KIA_ORA} ${i + j}` },
            { 'idempotency-key': `kia-ora-${i + j}` },
          ),
        ),
      );
      for (const r of replies) {
        expect(r.status).toBe(202);
        ids.push(r.json.id);
      }
    }
    // While they are fresh, memory holds them (so this test can see it empty out).
    const fresh = await memoryEntries(hermod);
    expect(fresh.recent_messages).toBeGreaterThan(0);
    expect(fresh['state:idempotency_keys']).toBeGreaterThan(0);

    // Every message reaches its final status (the simulator's receipt after 20 ms)…
    await eventually(async () => {
      const statuses = await Promise.all(ids.map(async (id) => (await client!.get(`/rest/sms/v2/messages?id=${id}`)).json?.status));
      return statuses.every((s) => s === 'received');
    }, 60_000);
    // …and then leaves memory: 10 s after its final status at most for the recent messages, 1 s for hot state, 2 s for its key.
    const held = await eventually(async () => {
      const e = await memoryEntries(hermod!);
      const inFlight = ['recent_messages', 'state:statuses', 'state:carrier_ids', 'state:idempotency_keys'];
      return inFlight.every((s) => e[s] === 0) ? e : undefined;
    }, 30_000);
    // Reply routing remembers the last message per handset (and per sender and handset, and the sender): by handset, not by message.
    expect(held['state:last_messages']).toBeLessThanOrEqual(2 * HANDSETS + 1);

    // Nothing is lost: what left memory is read from history.
    const again = await client.get(`/rest/sms/v2/messages?id=${ids[0]}`);
    expect(again.json).toMatchObject({ id: ids[0], content: `${KIA_ORA} 0`, status: 'received' });
  }, 180_000);

  it("shows an operator where the memory is: the history engine's inside core, and the V8 heap of each role", async () => {
    const metrics = await (await fetch(`http://localhost:${hermod!.metricsPort}/metrics`)).text();
    expect(seriesSum(metrics, 'hermod_history_engine_memory_bytes')).toBeGreaterThan(1024 * 1024);
    for (const role of ['core', 'gateway']) {
      const used = seriesSum(metrics, `hermod_role_heap_used_bytes{role="${role}"}`);
      expect(used).toBeGreaterThan(1024 * 1024);
      // Committed: what the heap holds of the process's memory, used or not.
      expect(seriesSum(metrics, `hermod_role_heap_committed_bytes{role="${role}"}`)).toBeGreaterThanOrEqual(used);
    }
  });

  it('restarts on the same data directory within 10 s on a quiet machine, replaying nothing that was flushed and keeping no flushed journal segment', async () => {
    client?.close();
    expect(await hermod!.stop()).toBe(0);
    const journal = path.join(dataDir, 'journal');
    const segmentsAtStop = fs.readdirSync(journal).filter((f) => f !== 'checkpoint.json');
    // One segment, the last one written, and the checkpoint says it is flushed to its end.
    expect(segmentsAtStop).toHaveLength(1);
    const checkpoint = JSON.parse(fs.readFileSync(path.join(journal, 'checkpoint.json'), 'utf8')) as { offset: number };
    expect(checkpoint.offset).toBe(fs.statSync(path.join(journal, segmentsAtStop[0]!)).size);

    const t0 = performance.now();
    hermod = await startHermod({ dataDir, env });
    const startedInS = (performance.now() - t0) / 1000;
    // Within 10 s; on a machine loaded by other work, where even the first start takes longer, within twice that
    // start (at load average 30 on 2 cores, starts swing between 16 and 32 s; what was replayed is checked below).
    console.log(`first start ${firstStartS.toFixed(1)} s, restart ${startedInS.toFixed(1)} s, load average ${os.loadavg()[0]!.toFixed(1)}`);
    expect(startedInS).toBeLessThan(Math.max(10, firstStartS * 2));
    expect(hermod.output()).not.toContain('replayed journaled history writes');
    // The segment flushed before the stop is gone; the new one is empty.
    const segments = fs.readdirSync(journal).filter((f) => f !== 'checkpoint.json');
    expect(segments).not.toContain(segmentsAtStop[0]);
    expect(segments.map((f) => fs.statSync(path.join(journal, f)).size)).toEqual([0]);

    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    const last = await client.get(`/rest/sms/v2/messages?id=${ids.at(-1)}`);
    expect(last.json).toMatchObject({ id: ids.at(-1), status: 'received' });
  }, 120_000);
});
