import { credentials, Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryState } from '../core/adapters/memory-state';
import { idempotencyService } from '../core/grpc/idempotency-service';
import { IdempotencyService } from '../proto/gen/hermod/v1/idempotency';
import { createCoreClient, type CoreClient } from './core-client';

/** Core's real Idempotency service on 127.0.0.1:0, counting the calls of each method; `without` leaves methods out (an older core). */
async function startCore(without: string[] = []) {
  const calls: Record<string, number> = {};
  const service = idempotencyService({ state: createMemoryState(), ttlMs: 60_000, leaseMs: 60_000 });
  const counted: UntypedServiceImplementation = {};
  for (const [method, handler] of Object.entries(service)) {
    if (without.includes(method)) continue;
    const unary = handler as (call: unknown, callback: unknown) => void;
    counted[method] = ((call: unknown, callback: unknown) => {
      calls[method] = (calls[method] ?? 0) + 1;
      unary(call, callback);
    }) as UntypedServiceImplementation[string];
  }
  const server = new Server();
  server.addService(IdempotencyService, counted);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const client = createCoreClient(`127.0.0.1:${port}`, credentials.createInsecure(), { batchMax: 1, batchDelayMs: 0 });
  return { calls, client, stop: () => (client.close(), server.forceShutdown()) };
}

const claimAll = (client: CoreClient, keys: string[]) =>
  Promise.all(keys.map((key, i) => client.claimIdempotencyKey({ applicationId: 'app-1', key: `sms_v2:${key}`, fingerprint: `f-${i}`, claimId: '' })));

describe('claims and answers of Idempotency-Keys, many to a call', () => {
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  it('gathers the claims a gateway asks at once into a few calls, each request with its own answer', async () => {
    const core = await startCore();
    stop = core.stop;
    const keys = Array.from({ length: 200 }, (_, i) => `tono-${i}-ā🌿`);
    const first = await claimAll(core.client, keys);
    expect(first.every((c) => c.claimed)).toBe(true);
    const again = await claimAll(core.client, keys);
    expect(again.map((c) => [c.claimed, c.fingerprint])).toEqual(keys.map((_, i) => [false, `f-${i}`]));
    expect(core.calls.claimMany).toBeLessThanOrEqual(10);
    expect(core.calls.claim).toBeUndefined();

    const stored = await Promise.all(
      first.map((c, i) =>
        core.client.completeIdempotencyKey({
          applicationId: 'app-1',
          key: `sms_v2:${keys[i]}`,
          claimId: c.claimId,
          fingerprint: `f-${i}`,
          response: `{"n":${i}}`,
        }),
      ),
    );
    expect(stored.every((s) => s.stored)).toBe(true);
    expect(core.calls.completeMany).toBeLessThanOrEqual(10);
  });

  it('fails only the request core refused, with its reason', async () => {
    const core = await startCore();
    stop = core.stop;
    const [ok, refused] = await Promise.allSettled([
      core.client.claimIdempotencyKey({ applicationId: 'app-1', key: 'sms_v2:kia-ora', fingerprint: 'f', claimId: '' }),
      core.client.claimIdempotencyKey({ applicationId: 'app-1', key: '', fingerprint: 'f', claimId: '' }),
    ]);
    expect(ok).toMatchObject({ status: 'fulfilled', value: { claimed: true } });
    expect(refused).toMatchObject({ status: 'rejected', reason: { code: 'missing_attrib' } });
  });

  it('calls Claim and Complete one by one on a core from before ClaimMany and CompleteMany', async () => {
    const core = await startCore(['claimMany', 'completeMany']);
    stop = core.stop;
    const claims = await claimAll(core.client, ['a', 'b', 'c']);
    expect(claims.every((c) => c.claimed)).toBe(true);
    const stored = await core.client.completeIdempotencyKey({
      applicationId: 'app-1',
      key: 'sms_v2:a',
      claimId: claims[0]!.claimId,
      fingerprint: 'f-0',
      response: '{}',
    });
    expect(stored.stored).toBe(true);
    expect(core.calls.claim).toBe(3);
    expect(core.calls.complete).toBe(1);
  });
});
