import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { rolePid } from './support/role-pids';

const CM = '/rest/campaign_manager/v1';
// Longer than the supervisor takes to start a new gateway on a loaded 2-core CI machine (3 s was not,
// and the new gateway then met an expired lease and never answered 409).
const LEASE_MS = 10_000;

/**
 * A gateway killed while it ran a request with an Idempotency-Key never
 * completes nor releases that key: the claim must not keep the client's
 * retries refused for the key's whole day.
 */
describe('an Idempotency-Key whose gateway died mid-request', () => {
  let h: HermodWithSimulator;
  beforeAll(async () => {
    h = await startHermodWithSimulator('idempotency-lease', { HERMOD_IDEMPOTENCY_LEASE: `${LEASE_MS}ms` });
  });
  afterAll(async () => h?.stop());

  it('is refused with 409 while the claim may still be running, then taken up by the retry once its lease is over', async () => {
    const members = Array.from({ length: 2000 }, (_, i) => ({ destination: `+6421880${String(i).padStart(4, '0')}`, param1: 'Mere Ngāti 🌿' }));
    const body = JSON.stringify({ name: 'rārangi — 名单', members });
    const key = 'list-import-7f3c2a';

    // The first upload sends half its body, then its gateway is killed.
    const url = new URL(`${CM}/acme/lists`, h.hermod.baseUrl);
    const first = https.request(url, {
      method: 'POST',
      ca: h.hermod.ca(),
      headers: {
        authorization: `Basic ${Buffer.from('acme:secret').toString('base64')}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'idempotency-key': key,
      },
    });
    first.on('error', () => undefined);
    first.write(body.slice(0, body.length / 2));
    const gateway = rolePid(h.hermod.pid, 'gateway')!;
    // The claim is taken before the body is read: a retry now is refused as still running.
    await eventually(async () => ((await h.client.post(`${CM}/acme/lists`, JSON.parse(body), { 'idempotency-key': key })).status === 409 ? true : undefined));
    const killedAt = Date.now();
    process.kill(gateway, 'SIGKILL');
    first.destroy();

    // The supervisor starts a new gateway; the key is still held until its lease is over.
    const refused = await eventually(async () => {
      const r = await h.client.post(`${CM}/acme/lists`, JSON.parse(body), { 'idempotency-key': key });
      return r.status === 409 ? r : undefined;
    }, LEASE_MS);
    expect(refused.text).toContain('still being processed');

    const taken = await eventually(async () => {
      const r = await h.client.post(`${CM}/acme/lists`, JSON.parse(body), { 'idempotency-key': key });
      return r.status === 201 ? r : undefined;
    }, LEASE_MS + 20_000);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_MS - 500);
    const again = await h.client.post(`${CM}/acme/lists`, JSON.parse(body), { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.id).toBe(taken.json.id);
  }, 90_000);
});
