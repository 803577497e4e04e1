import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startRedisDeployment, type RedisDeployment } from './support/redis-deployment';
import type { RoleProcess } from './support/role-process';

/**
 * The Redis bus and Redis state on one Redis, which comes back without its data (no persistence, as an operator may
 * run it): the jobs its streams held for the workers went with it. Nothing answered 202 may be lost with them.
 */
describe('a Redis that carries the bus and hot state and comes back empty', () => {
  const cleanup: (() => unknown)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await Promise.resolve(c()).catch(() => undefined);
  });

  const deployment = (o: { receiptDelayMs: number; dataDirPrefix: string; env?: Record<string, string> }) => startRedisDeployment({ ...o, cleanup });

  it('hands every message that was waiting for a worker to its channel again, so each still reaches the carrier', async () => {
    const d = await deployment({ receiptDelayMs: 10, dataDirPrefix: 'hermod-redis-empty-', env: { HERMOD_REDIS_PREFIX: 'tēnā' } });
    const submitted = new Set<string>();
    d.simulator.on('submit', (s: { text: string }) => submitted.add(s.text));
    // No SMS worker yet: the messages wait on the bus's stream for one.
    const core = await d.role(['core'], '"msg":"core listening"');
    const { client } = await d.gateway(core);
    const texts = ['Kia ora, e hoa mā 👋🏽', '你好，世界', 'Tēnā koe — नमस्ते'];
    const ids: string[] = [];
    for (const [i, content] of texts.entries()) {
      const r = await client.post('/rest/sms/v2/messages', { destination: `+642100077${i}`, content });
      expect(r.status, r.text).toBe(202);
      ids.push(r.json.id);
    }

    // Redis stops and comes back empty, its streams gone with the messages on them.
    await d.restartRedisEmpty();
    await eventually(() => (core.output().includes('hot state lost data') ? true : undefined), 30_000);

    await d.role(['worker', '--channel', 'sms'], '"msg":"channel worker started"');
    await eventually(() => (texts.every((t) => submitted.has(t)) ? true : undefined), 60_000, 200);
    for (const id of ids)
      await eventually(async () => ((await client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status === 'received' ? true : undefined), 30_000, 200);
  }, 180_000);

  it('asks the SMSC about the messages whose delivery receipts went with its streams, so each still ends received', async () => {
    // Receipts a moment after the submits: time to stop core before they come.
    const d = await deployment({ receiptDelayMs: 1500, dataDirPrefix: 'hermod-redis-receipts-' });
    const core = await d.role(['core'], '"msg":"core listening"');
    // Stopped by a signal, it is woken for the others to stop it.
    cleanup.push(() => process.kill(core.pid, 'SIGCONT'));
    const { client } = await d.gateway(core);
    await d.role(['worker', '--channel', 'sms'], '"msg":"channel worker started"');
    // A long one in three parts (UCS-2 for its macrons): a receipt for each part, each asked about.
    const texts = ['Kia ora, e hoa mā 👋🏽', '你好，世界', 'Tēnā koutou katoa, ngā mihi nui ki a koutou — '.repeat(4)];
    const ids: string[] = [];
    for (const [i, content] of texts.entries()) {
      const r = await client.post('/rest/sms/v2/messages', { destination: `+642100088${i}`, content });
      expect(r.status, r.text).toBe(202);
      ids.push(r.json.id);
    }
    const statusOf = async (id: string) => (await client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status;
    for (const id of ids) await eventually(async () => ((await statusOf(id)) === 'submitted' ? true : undefined), 30_000, 50);
    const submits = d.simulator.submitCount;
    expect(submits).toBeGreaterThanOrEqual(5);

    // Core stops reading; the receipts come, the worker puts them on the status stream and the SMSC is told they
    // are safe. Then Redis comes back empty, and they are gone with the stream.
    process.kill(core.pid, 'SIGSTOP');
    await eventually(() => (d.simulator.receiptCount >= submits ? true : undefined), 30_000, 50);
    await new Promise((r) => setTimeout(r, 300));
    await d.restartRedisEmpty();
    process.kill(core.pid, 'SIGCONT');
    await eventually(() => (core.output().includes('hot state lost data') ? true : undefined), 30_000);

    for (const id of ids) await eventually(async () => ((await statusOf(id)) === 'received' ? true : undefined), 60_000, 200);
    // Asked, not sent again.
    expect(d.simulator.submitCount).toBe(submits);
    expect(core.output()).toContain('asking the carriers about messages whose delivery receipts may be lost');
  }, 180_000);

  /**
   * Three messages sent and `submitted`; core stopped (for an upgrade), their receipts come meanwhile and wait on the
   * status stream; Redis restarts without its data before core is back: the receipts, and every marker core left,
   * are gone. What was sent, and how to read a status through a gateway of the core started next.
   */
  async function receiptsLostWhileCoreWasDown(d: RedisDeployment, prefix: string) {
    const core = await d.role(['core'], '"msg":"core listening"');
    await d.role(['worker', '--channel', 'sms'], '"msg":"channel worker started"');
    const before = await d.gateway(core);
    const texts = ['Kia ora, e hoa mā 👋🏽', '你好，世界', 'Ngā mihi — 🌿'];
    const ids: string[] = [];
    for (const [i, content] of texts.entries()) {
      const r = await before.client.post('/rest/sms/v2/messages', { destination: `${prefix}${i}`, content });
      expect(r.status, r.text).toBe(202);
      ids.push(r.json.id);
    }
    const statusOf = async (client: typeof before.client, id: string) => (await client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status;
    for (const id of ids) await eventually(async () => ((await statusOf(before.client, id)) === 'submitted' ? true : undefined), 30_000, 50);
    const submits = d.simulator.submitCount;
    before.client.close();
    await before.gateway.stop();
    await core.stop();
    await eventually(() => (d.simulator.receiptCount >= submits ? true : undefined), 30_000, 50);
    await new Promise((r) => setTimeout(r, 300));
    await d.restartRedisEmpty();
    return {
      submits,
      /** Resolves once a gateway of `core` reads every message as received. */
      allReceivedThrough: async (core: RoleProcess) => {
        const { client } = await d.gateway(core);
        for (const id of ids) await eventually(async () => ((await statusOf(client, id)) === 'received' ? true : undefined), 60_000, 200);
      },
    };
  }

  it('asks the SMSC too when Redis came back empty while core was down, so receipts that went with it still end received', async () => {
    const d = await deployment({ receiptDelayMs: 1500, dataDirPrefix: 'hermod-redis-down-' });
    const lost = await receiptsLostWhileCoreWasDown(d, '+642100099');

    const again = await d.role(['core'], '"msg":"core listening"');
    await lost.allReceivedThrough(again);
    expect(d.simulator.submitCount).toBe(lost.submits);
    expect(again.output()).toContain('hot state was empty at this start');
  }, 180_000);

  it('asks the SMSC at the next start when core died before it had asked, so receipts that went with Redis still end received', async () => {
    const d = await deployment({ receiptDelayMs: 1500, dataDirPrefix: 'hermod-redis-owed-' });
    const lost = await receiptsLostWhileCoreWasDown(d, '+642100066');

    // The next core finds Redis empty and is killed as it says so, before its questions are on their way. It left
    // its markers in Redis: the start after it does not find Redis empty, and has only the data directory to go by.
    const dying = await d.role(['core'], 'hot state was empty at this start');
    await dying.kill9();

    const again = await d.role(['core'], '"msg":"core listening"');
    await lost.allReceivedThrough(again);
    expect(d.simulator.submitCount).toBe(lost.submits);
    expect(again.output()).not.toContain('hot state was empty at this start');
    expect(again.output()).toContain('were owed when the last run stopped');
  }, 180_000);
});
