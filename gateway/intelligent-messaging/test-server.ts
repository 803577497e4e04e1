import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { Authenticator, Caller } from '../auth';
import type { ImClient } from '../im-client';
import type { ImSendRequest } from '../../proto/gen/hermod/v1/im';
import { HermodError } from '../../lib/errors';
import { createLogger } from '../../lib/log';
import { intelligentMessagingErrors } from './error-body';
import { intelligentMessagingRouter } from './routes';
import { interfaceHandler } from '../http/interface-handler';
import { createSharedRateLimiter } from './shared-rate-limiter';
import { createMemoryState } from '../../core/adapters/memory-state';
import { createImRateBudget } from '../../core/im/im-rate-budget';
import type { IdempotencyStore } from '../http/idempotency';

/** Test support: the interface served on 127.0.0.1:0 the way gateway/app.ts mounts it, with a fake core and fake credentials. */

export const API_KEY = 'im-test-key';
export const BASIC = 'Basic ' + Buffer.from('shop:secret').toString('base64');
export const CALLER: Caller = { applicationId: 'app-1', applicationName: 'shop' };
export const MESSAGE_ID = '0b8a4d4e-5d7c-4f7e-9a43-1f2c3d4e5f60';

export interface TestServer {
  url: string;
  /** Every request the fake core received, in order. */
  sent: ImSendRequest[];
  /** The next sends fail with this error until it is cleared. */
  failWith(err: Error | undefined): void;
  /** Sends wait from now until the returned function is called. */
  hold(): () => void;
  post(body: unknown, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; json: any }>;
  close(): Promise<void>;
}

/** Accepts the key (bare, Bearer or ApiKey) and shop:secret over Basic, as core would. */
const fakeAuth: Authenticator = {
  async authenticate(header: string | undefined, _from: string, allowApiKey = false): Promise<Caller> {
    if (!header) throw new HermodError('unauthorized', 'missing credentials');
    if (header === BASIC) return CALLER;
    if (allowApiKey && header.replace(/^(Bearer|ApiKey)\s+/i, '').trim() === API_KEY) return CALLER;
    throw new HermodError('unauthorized', 'invalid credentials');
  },
};

export async function startTestServer(options: { rateLimit?: number; maxBodyBytes?: number } = {}): Promise<TestServer> {
  const sent: ImSendRequest[] = [];
  let failure: Error | undefined;
  let held: Promise<void> | undefined;
  const im: Pick<ImClient, 'send'> = {
    async send(request) {
      await held;
      if (failure) throw failure;
      sent.push(request);
      return { id: MESSAGE_ID, replayed: false };
    },
  };
  const log = createLogger({ test: 'intelligent-messaging' });
  // Core's own budget over in-process hot state, as a gateway reaches it through gRPC.
  const budget = createImRateBudget({ state: createMemoryState(), limitOf: async () => -1, defaultLimit: options.rateLimit ?? 0 });
  const rateLimiter = createSharedRateLimiter((applicationId, wanted) => budget.take(applicationId, wanted));
  // Core's Idempotency service over in-process hot state, as a gateway reaches it through gRPC.
  const state = createMemoryState();
  const idempotency: IdempotencyStore = {
    async claimIdempotencyKey({ applicationId, key, fingerprint }) {
      const claimId = randomUUID();
      const held = await state.claimIdempotencyKey(`${applicationId}:${key}`, fingerprint, claimId, 60_000);
      return held
        ? { claimed: false, fingerprint: held.fingerprint, response: held.response ?? '', claimId: '', leaseMs: 60_000 }
        : { claimed: true, fingerprint, response: '', claimId, leaseMs: 60_000 };
    },
    renewIdempotencyKey: async ({ applicationId, key, claimId }) => ({ renewed: await state.renewIdempotencyKey(`${applicationId}:${key}`, claimId, 60_000) }),
    completeIdempotencyKey: async ({ applicationId, key, claimId, fingerprint, response }) => ({
      stored: await state.completeIdempotencyKey(`${applicationId}:${key}`, claimId, { fingerprint, response }, 60_000),
    }),
    releaseIdempotencyKey: ({ applicationId, key, claimId }) => state.releaseIdempotencyKey(`${applicationId}:${key}`, claimId),
  };
  const router = intelligentMessagingRouter({ im, idempotency, auth: fakeAuth, log, maxBodyBytes: options.maxBodyBytes ?? 1_000_000, rateLimiter });
  const app = new Koa();
  app.silent = true;
  app.use(interfaceHandler(intelligentMessagingErrors(log), router, log));

  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    sent,
    failWith: (err) => void (failure = err),
    hold() {
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
    async post(body, headers = {}) {
      const res = await fetch(`${url}/rest/im/v1/message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: API_KEY, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
