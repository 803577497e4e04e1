import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedRequestsAcrossAKill } from './support/keyed-requests-across-a-kill';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { rolePid } from './support/role-pids';
import type { Reply } from './support/https-client';

const CM = '/rest/campaign_manager/v1/acme';
const IMPORTS = 400;
const AT_ONCE = 32;

/**
 * A bulk sender whose list or campaign POST got 503 (core died while the
 * import was in its hands) cannot know whether the list or campaign was
 * created: it retries with the same Idempotency-Key. Whatever core wrote
 * before it died, the retry must not create a second one; a second scheduled
 * campaign would send every member twice.
 */
describe('Campaign Manager imports with an Idempotency-Key across a kill -9 of core', () => {
  let h: HermodWithSimulator;
  beforeAll(async () => {
    h = await startHermodWithSimulator('campaign-idempotency-core-crash');
  });
  afterAll(async () => h?.stop());

  it('creates each list and campaign once, however its first try ended, when the client retries with the same key', async () => {
    // Campaigns due tomorrow: nothing is sent while the test runs.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 19) + 'Z';
    const request = (i: number): { path: string; body: object } => {
      const members = [
        { destination: `+6421880${String(i).padStart(4, '0')}`, param1: 'Tēnā koe' },
        { destination: `+6421881${String(i).padStart(4, '0')}`, param1: '你好 👋🏽' },
      ];
      return i % 4 === 3
        ? { path: `${CM}/scheduled_campaigns`, body: { name: `pāho-${i}`, schedule: tomorrow, content: 'Kia ora {{param1}} 🌿', members } }
        : { path: `${CM}/lists`, body: { name: `rārangi-${i}`, members } };
    };
    const post = (i: number): Promise<Reply | undefined> => {
      const { path, body } = request(i);
      return h.client.post(path, body, { 'idempotency-key': `kawe-${i}` }).catch(() => undefined);
    };

    const core = rolePid(h.hermod.pid, 'core')!;
    const { unanswered, ids } = await keyedRequestsAcrossAKill({
      count: IMPORTS,
      atOnce: AT_ONCE,
      send: post,
      ok: 201,
      kill: () => process.kill(core, 'SIGKILL'),
      retryForMs: 60_000,
    });
    // The kill must have landed among the imports: some were not answered 201.
    expect(unanswered.length).toBeGreaterThan(0);

    const lists = (await h.client.get(`${CM}/lists`)).json as { id: number; name: string }[];
    const shown = await h.hermod.cli(['campaigns', 'list', 'acme']);
    expect(shown.code, shown.output).toBe(0);
    const campaigns = shown.output
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((line) => {
        const [, id, name] = line.split('\t');
        return { id: Number(id), name: name! };
      });
    const twice: string[] = [];
    for (let i = 0; i < IMPORTS; i++) {
      const { body } = request(i);
      const name = (body as { name: string }).name;
      const found = (i % 4 === 3 ? campaigns : lists).filter((x) => x.name === name);
      if (found.length !== 1) twice.push(`${name}: ${found.length}`);
      else expect(found[0]!.id, name).toBe(ids.get(i));
    }
    expect(twice).toEqual([]);
  }, 240_000);

  it('answers a retry with the list or campaign created, when the answer was never kept', async () => {
    // What a crash between writing the list and keeping its answer leaves: the list, and no answer under its key.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 19) + 'Z';
    const members = [{ destination: '+64218890001', param1: 'Ānaru 🌿' }, { destination: '+64218890001' }, { destination: '+64218890002' }];
    const list = { name: 'rārangi-ngaro', members };
    const campaign = { name: 'pāho-ngaro', schedule: tomorrow, content: 'Kia ora {{param1}} — 你好', members };
    const key = { 'idempotency-key': 'kawe-ngaro' };
    const campaignKey = { 'idempotency-key': 'kawe-ngaro-paho' };
    const firstList = await h.client.post(`${CM}/lists`, list, key);
    const firstCampaign = await h.client.post(`${CM}/scheduled_campaigns`, campaign, campaignKey);
    expect(firstList.status, firstList.text).toBe(201);
    expect(firstCampaign.status, firstCampaign.text).toBe(201);
    expect(firstList.json.error_messages).toMatch(/1 duplicate member/);

    await h.restart((dataDir) => fs.rmSync(path.join(dataDir, 'state', 'idempotency-keys.jsonl')));

    const retryList = await h.client.post(`${CM}/lists`, list, key);
    const retryCampaign = await h.client.post(`${CM}/scheduled_campaigns`, campaign, campaignKey);
    expect([retryList.status, retryCampaign.status]).toEqual([201, 201]);
    expect(retryList.json).toEqual(firstList.json);
    expect(retryCampaign.json).toEqual(firstCampaign.json);
    expect(firstList.headers['idempotent-replayed']).toBeUndefined();
    expect([retryList.headers['idempotent-replayed'], retryCampaign.headers['idempotent-replayed']]).toEqual(['true', 'true']);
    const pathOf = (r: Reply): string => new URL(String(r.headers.location)).pathname;
    expect(pathOf(retryList)).toBe(pathOf(firstList));
    const lists = (await h.client.get(`${CM}/lists`)).json as { name: string }[];
    expect(lists.filter((l) => l.name === 'rārangi-ngaro')).toHaveLength(1);
    const shown = await h.hermod.cli(['campaigns', 'list', 'acme']);
    expect(shown.output.split('\n').filter((line) => line.split('\t')[2] === 'pāho-ngaro')).toHaveLength(1);

    // The answer is kept again: another body under the key is refused, as before the crash.
    const changed = await h.client.post(`${CM}/lists`, { ...list, name: 'rārangi-hou' }, key);
    expect(changed.status, changed.text).toBe(422);
    const again = await h.client.post(`${CM}/lists`, list, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json).toEqual(firstList.json);
  }, 120_000);
});
