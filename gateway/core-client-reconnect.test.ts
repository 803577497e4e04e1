import { Server, ServerCredentials, credentials, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { AccountsService, type AuthenticateRequest, type AuthenticateResponse } from '../proto/gen/hermod/v1/accounts';
import { createCoreClient, type CoreClient } from './core-client';

/** A stand-in for core's Accounts service on `port` (0: any), answering every credential as acme's. */
async function startCore(port: number): Promise<{ port: number; server: Server }> {
  const server = new Server();
  server.addService(AccountsService, {
    authenticate: (_call: ServerUnaryCall<AuthenticateRequest, AuthenticateResponse>, callback: sendUnaryData<AuthenticateResponse>) =>
      callback(null, { ok: true, application: { id: 'ā1', name: 'kāinga' } as AuthenticateResponse['application'], passwordTag: '' }),
  } as never);
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { port: bound, server };
}

const ask = (client: CoreClient) => client.authenticate({ credential: { $case: 'basic', value: { name: 'kāinga', password: 'kupuhipa' } } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a gateway's calls to core after core was away", () => {
  let client: CoreClient | undefined;
  let server: Server | undefined;
  afterEach(() => {
    client?.close();
    server?.forceShutdown();
  });

  it('reach a core that is back within a couple of seconds, however long it was away', async () => {
    const first = await startCore(0);
    server = first.server;
    client = createCoreClient(`127.0.0.1:${first.port}`, credentials.createInsecure(), { batchMax: 10, batchDelayMs: 1 });
    expect((await ask(client)).ok).toBe(true);
    server.forceShutdown();
    // Requests keep coming while core is away (a restart that recovers a large backlog took 71 s in a trial): each fails.
    const awayUntil = Date.now() + 30_000;
    while (Date.now() < awayUntil) {
      await expect(ask(client)).rejects.toMatchObject({ code: 'unavailable' });
      await sleep(250);
    }
    server = (await startCore(first.port)).server;
    const back = Date.now();
    for (;;) {
      const answered = await ask(client).then(
        () => true,
        () => false,
      );
      if (answered) break;
      await sleep(100);
    }
    // gRPC's default reconnect backoff grows to 120 s: the gateways answered 503 for some 30 s after core listened.
    expect(Date.now() - back).toBeLessThan(2_500);
  }, 60_000);
});
