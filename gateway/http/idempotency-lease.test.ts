import { credentials, Server, ServerCredentials } from '@grpc/grpc-js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryState } from '../../core/adapters/memory-state';
import { deferred } from '../../core/adapters/contract-support';
import { idempotencyService } from '../../core/grpc/idempotency-service';
import { HermodError, toHermodError } from '../../lib/errors';
import { IdempotencyService } from '../../proto/gen/hermod/v1/idempotency';
import { createCoreClient, type CoreClient } from '../core-client';
import { idempotent, type IdempotencyStore } from './idempotency';

const LEASE_MS = 600;
/** The lease the next harness is started with. */
let leaseMs = LEASE_MS;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * idempotent() against core's real Idempotency service (memory hot state, a
 * 600 ms lease) over gRPC on 127.0.0.1:0; each run of the work waits for the
 * test to let it go.
 */
describe('an Idempotency-Key held by a request that outlives its lease', () => {
  let grpcServer: Server;
  let core: CoreClient;
  let server: http.Server;
  let url: string;
  let renewals: number;
  let renewalsFail: boolean;
  let gates: ReturnType<typeof deferred<void>>[];
  let runs: number;
  let releasesRefused: number;
  let claimAnswersLost: number;
  let completesRefused: number;
  let dedupKeys: string[];

  beforeEach(async () => {
    grpcServer = new Server();
    grpcServer.addService(IdempotencyService, idempotencyService({ state: createMemoryState(), ttlMs: 60_000, leaseMs }));
    const port = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    core = createCoreClient(`127.0.0.1:${port}`, credentials.createInsecure(), { batchMax: 1, batchDelayMs: 0 });
    renewals = 0;
    renewalsFail = false;
    gates = [];
    runs = 0;
    releasesRefused = 0;
    claimAnswersLost = 0;
    completesRefused = 0;
    dedupKeys = [];
    // Core's client, but its renewals can be made to fail (core out of reach for a while).
    const store: IdempotencyStore = {
      claimIdempotencyKey: async (r) => {
        const answer = await core.claimIdempotencyKey(r);
        if (claimAnswersLost > 0) {
          // Core took the claim, but its answer came too late (core stopped a while): the gateway saw a timeout.
          claimAnswersLost -= 1;
          throw new HermodError('timeout', 'core did not answer in time');
        }
        return answer;
      },
      renewIdempotencyKey: async (r) => {
        renewals++;
        if (renewalsFail) throw new HermodError('unavailable', 'core is out of reach');
        return core.renewIdempotencyKey(r);
      },
      completeIdempotencyKey: async (r) => {
        if (completesRefused > 0) {
          // Hot state failed under the answer's write (a Redis master dying): the work is done, its answer not kept.
          completesRefused -= 1;
          throw new HermodError('unavailable', 'storing an idempotent response: Connection is closed');
        }
        return core.completeIdempotencyKey(r);
      },
      releaseIdempotencyKey: async (r) => {
        if (releasesRefused > 0) {
          releasesRefused -= 1;
          throw new HermodError('unavailable', 'core is out of reach');
        }
        return core.releaseIdempotencyKey(r);
      },
    };
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (err) {
        const e = toHermodError(err);
        ctx.status = e.httpStatus;
        ctx.type = 'text/plain';
        ctx.body = e.message;
      }
    });
    app.use(async (ctx) => {
      let raw = '';
      for await (const chunk of ctx.req) raw += chunk;
      ctx.state.rawBody = raw;
      await idempotent(ctx, store, 'app-1', 'sms_v2', async (dedupKeyOf) => {
        const run = ++runs;
        dedupKeys.push(dedupKeyOf(0));
        await gates[run - 1]?.promise;
        ctx.status = 202;
        ctx.body = { run, text: (JSON.parse(raw) as { text: string }).text };
      });
    });
    server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    for (const g of gates) g.resolve();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    core.close();
    grpcServer.forceShutdown();
  });

  const post = async (key: string, text: string) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ text }) });
    const body = await res.text();
    return {
      status: res.status,
      replayed: res.headers.get('idempotent-replayed'),
      retryAfter: res.headers.get('retry-after'),
      body,
      json: res.headers.get('content-type')?.includes('json') ? JSON.parse(body) : undefined,
    };
  };

  it('refuses a retry three leases later with 409 instead of running the work again, and stops renewing once answered', async () => {
    gates.push(deferred());
    const first = post('kia-ora-1', 'Kia ora, e hoa mā 👋🏽');
    await sleep(3 * LEASE_MS);
    const retry = await post('kia-ora-1', 'Kia ora, e hoa mā 👋🏽');
    expect(retry.status, retry.body).toBe(409);
    expect(retry.body).toContain('still being processed');
    // Says how long a key whose gateway died stays held: the retry is not told to wait a second for ever.
    expect(retry.body).toMatch(/free again at most \d+ (ms|seconds?|minutes?) after its request was last seen/);
    // How long to wait, in seconds, as HTTP clients read it.
    expect(retry.retryAfter).toBe('1');
    expect(renewals).toBeGreaterThanOrEqual(5);
    gates[0]!.resolve();
    expect((await first).json).toEqual({ run: 1, text: 'Kia ora, e hoa mā 👋🏽' });
    const again = await post('kia-ora-1', 'Kia ora, e hoa mā 👋🏽');
    expect(again.json).toEqual({ run: 1, text: 'Kia ora, e hoa mā 👋🏽' });
    expect(again.replayed).toBe('true');
    expect(runs).toBe(1);
    const renewed = renewals;
    await sleep(2 * LEASE_MS);
    expect(renewals).toBe(renewed);
  });

  it('answers a request whose claim ran out and was taken by a retry with its own work, and keeps the retry’s answer for replays', async () => {
    gates.push(deferred());
    renewalsFail = true;
    const first = post('ni-hao-2', '你好');
    await sleep(2 * LEASE_MS);
    // The first request's lease ran out unrenewed: the retry takes the key and runs.
    const retry = await post('ni-hao-2', '你好');
    expect(retry.status, retry.body).toBe(202);
    expect(retry.json).toEqual({ run: 2, text: '你好' });
    gates[0]!.resolve();
    const answered = await first;
    expect(answered.status).toBe(202);
    expect(answered.json).toEqual({ run: 1, text: '你好' });
    const again = await post('ni-hao-2', '你好');
    expect(again.replayed).toBe('true');
    expect(again.json).toEqual({ run: 2, text: '你好' });
  });

  it('does not let a request whose claim ran out release the key of the retry that took it when it fails', async () => {
    gates.push(deferred(), deferred());
    renewalsFail = true;
    const first = post('tena-koe-3', 'Tēnā koe');
    await sleep(2 * LEASE_MS);
    const retry = post('tena-koe-3', 'Tēnā koe');
    // Once the retry holds the key and runs.
    while (runs < 2) await sleep(10);
    gates[0]!.reject(new HermodError('unavailable', 'the first run failed'));
    expect((await first).status).toBe(503);
    // The retry still holds the key: a third request is refused, not run.
    renewalsFail = false;
    const third = await post('tena-koe-3', 'Tēnā koe');
    expect(third.status, third.body).toBe(409);
    gates[1]!.resolve();
    expect((await retry).json).toEqual({ run: 2, text: 'Tēnā koe' });
    expect(runs).toBe(2);
  });

  describe('with a lease of a minute', () => {
    beforeAll(() => {
      leaseMs = 60_000;
    });
    afterAll(() => {
      leaseMs = LEASE_MS;
    });

    it('releases a key whose claim core took but did not answer in time (504), so the retry runs instead of waiting out the lease', async () => {
      claimAnswersLost = 1;
      const first = await post('kia-ora-6', 'Kia ora 🌿 — 你好');
      expect(first.status, first.body).toBe(504);
      expect(runs).toBe(0);
      const retry = await post('kia-ora-6', 'Kia ora 🌿 — 你好');
      expect(retry.status, retry.body).toBe(202);
    });

    it('releases the key of a request whose answer could not be kept, so the retry runs (naming the same messages) instead of waiting out the lease', async () => {
      completesRefused = 1;
      const first = await post('kia-ora-7', 'Kia ora 🌿 — 你好');
      expect(first.status, first.body).toBe(503);
      const retry = await post('kia-ora-7', 'Kia ora 🌿 — 你好');
      expect(retry.status, retry.body).toBe(202);
      expect(dedupKeys[1]).toBe(dedupKeys[0]);
      // Its answer is kept now: another retry replays it.
      const again = await post('kia-ora-7', 'Kia ora 🌿 — 你好');
      expect(again.replayed).toBe('true');
      expect(runs).toBe(2);
    });

    it('releases the key of a request that failed while core was out of reach once core answers, so the retry runs instead of waiting out the lease', async () => {
      gates.push(deferred());
      releasesRefused = 2;
      const first = post('kia-ora-4', 'Kia ora 🌿');
      while (runs < 1) await sleep(10);
      gates[0]!.reject(new HermodError('unavailable', 'core is unavailable'));
      expect((await first).status).toBe(503);
      // Core refused the release twice; the gateway tries again after 1 s, then 2 s, well inside the lease.
      const retry = await post('kia-ora-4', 'Kia ora 🌿');
      expect(retry.status).toBe(409);
      await sleep(3500);
      const later = await post('kia-ora-4', 'Kia ora 🌿');
      expect(later.status, later.body).toBe(202);
      // The retry names its message as the first try did: core answers the first's message if it was stored.
      expect(dedupKeys[1]).toBe(dedupKeys[0]);
      expect(dedupKeys[0]).toMatch(/^[\w-]{43}\.0$/);
      // Another request under another key names another message.
      await post('kia-ora-5', 'Kia ora 🌿');
      expect(dedupKeys[2]).not.toBe(dedupKeys[0]);
    });
  });
});
