import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { basic, openPost } from './support/raw-request';

const CM = '/rest/campaign_manager/v1';
const LEASE_MS = 2000;

/**
 * A request that runs longer than HERMOD_IDEMPOTENCY_LEASE keeps its
 * Idempotency-Key while its gateway lives: the gateway renews the claim, so a
 * retry meanwhile is refused instead of running the work a second time.
 */
describe('an Idempotency-Key whose request outlives its lease', () => {
  let h: HermodWithSimulator;
  beforeAll(async () => {
    h = await startHermodWithSimulator('idempotency-renewal', { HERMOD_IDEMPOTENCY_LEASE: `${LEASE_MS}ms` });
  });
  afterAll(async () => h?.stop());

  const listsNamed = async (name: string): Promise<unknown[]> => {
    const r = await h.client.get(`${CM}/acme/lists`);
    expect(r.status, r.text).toBe(200);
    return (r.json as { name: string }[]).filter((l) => l.name === name);
  };

  it('stays claimed by the running upload: a retry many leases later gets 409, and the list is imported once', async () => {
    const members = Array.from({ length: 300 }, (_, i) => ({ destination: `+6421990${String(i).padStart(4, '0')}`, param1: 'Kia ora, e hoa mā 👋🏽 你好' }));
    const name = 'rārangi-roa — 长名单';
    const text = JSON.stringify({ name, members });
    const key = 'list-renewed-9d41';
    const headers = { authorization: basic('acme', 'secret'), 'content-type': 'application/json', 'idempotency-key': key };
    const slow = openPost(h.hermod.baseUrl, h.hermod.ca(), `${CM}/acme/lists`, headers);
    slow.write(text.slice(0, 1000));

    // Retries at several times the lease, while the first upload still streams.
    for (const wait of [2 * LEASE_MS, 3 * LEASE_MS]) {
      await new Promise((r) => setTimeout(r, wait));
      const retry = await h.client.post(`${CM}/acme/lists`, JSON.parse(text), { 'idempotency-key': key });
      expect(retry.status, retry.text).toBe(409);
      expect(retry.text).toContain('still being processed');
    }

    const first = await slow.end(text.slice(1000));
    expect(first.status, first.text).toBe(201);
    const after = await h.client.post(`${CM}/acme/lists`, JSON.parse(text), { 'idempotency-key': key });
    expect(after.status, after.text).toBe(201);
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(after.json).toEqual(first.json);
    expect(await listsNamed(name)).toHaveLength(1);
  }, 60_000);
});
