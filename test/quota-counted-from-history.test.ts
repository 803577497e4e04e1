import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

/** hermod on its embedded defaults: hot state in the core process, history in chDB. */
describe('a quota counts the period’s sends that history has', () => {
  let h: HermodWithSimulator | undefined;
  afterAll(() => h?.stop());

  const send = async (i: number): Promise<string> => {
    const r = await h!.client.post('/rest/sms/v2/messages', {
      destination: `+64211${String(i).padStart(6, '0')}`,
      content: `Kia ora ${i}, e hoa mā — 你好 👋🏽`,
    });
    expect(r.status, r.text).toBe(202);
    return String(r.json.id);
  };
  const finalOf = (id: string) =>
    eventually(async () => {
      const { status } = (await h!.client.get(`/rest/sms/v2/messages?id=${id}`)).json as { status: string };
      return ['received', 'deficient', 'blocked', 'failed'].includes(status) ? status : undefined;
    }, 30_000);

  it('set after the month’s first sends, counts them; and a restart of the in-process state does not start the month over', async () => {
    h = await startHermodWithSimulator('quota-history');
    const before = [await send(1), await send(2), await send(3)];
    expect(await Promise.all(before.map(finalOf))).toEqual(['received', 'received', 'received']);

    const set = await h.hermod.cli(['apps', 'set-quota', 'acme', '--messages', '5', '--per', 'month']);
    expect(set.code, set.output).toBe(0);
    const after = [await send(4), await send(5), await send(6)];
    expect(await Promise.all(after.map(finalOf))).toEqual(['received', 'received', 'deficient']);

    await h.restart();
    expect(await finalOf(await send(7))).toBe('deficient');
    const v1 = await h.client.post('/rest/gateway/messages', { destination: '+64211000008', content: 'Ka kite anō — 再见' });
    expect(v1.status).toBe(403);
    expect(v1.json).toMatchObject({ error: 'quota_exceeded' });
  }, 120_000);
});
