import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayApp, interfaceErrors, type GatewayDeps } from './app';
import { answerHeaderOverflow, PARSER_HEADER_LIMIT, withHeadChecks } from './http/header-overflow';
import { createAuthenticator } from './auth';
import { limitRequestTime } from './http/request-timeouts';
import { continueWhenRead } from './http/continue-when-read';
import type { CampaignsClient } from './campaigns-client';
import type { CoreClient } from './core-client';
import type { ImClient } from './im-client';
import { HermodError } from '../lib/errors';
import { createLogger } from '../lib/log';

/**
 * Test support: the whole gateway app (every interface, mounted as
 * gateway-main mounts it) on 127.0.0.1:0, with no core behind it. Every call
 * to core fails as `unavailable`, so what the gateway answers on its own
 * (documents, missing credentials, unknown routes) is answered for real.
 */
export function gatewayTestDeps(coreMethods: Partial<CoreClient> = {}): GatewayDeps {
  const core = withMethods(noCore<CoreClient>('core'), coreMethods);
  const carrier = { baseUrl: 'https://carrier.example', token: 'tōkena', sender: '+6421000001', webhookSecret: 'hūnā', apiVersion: 'v21.0' };
  return {
    core,
    auth: createAuthenticator(core, 1_000),
    log: createLogger({ test: 'gateway' }),
    maxBodyBytes: 1_000_000,
    campaigns: noCore<CampaignsClient>('campaigns'),
    maxImportBytes: 10_000_000,
    im: noCore<ImClient>('intelligent messaging'),
    carriers: { wab: carrier, rcs: carrier, mms: carrier },
    scheduleHorizonMs: 60 * 86_400_000,
  };
}

/** Stand-ins for calls to core's other services, as `coreMethods` are for the core client's. */
export interface TestClients {
  im?: Partial<ImClient>;
  campaigns?: Partial<CampaignsClient>;
  /** HERMOD_REQUEST_IDLE_TIMEOUT, in milliseconds. */
  requestIdleTimeoutMs?: number;
  /** HERMOD_REQUEST_MIN_RATE, bytes a second (0, no rate, unless given). */
  requestMinBytesPerSecond?: number;
  /** How long a request's head may take to arrive (60 s unless given). */
  requestHeadTimeoutMs?: number;
}

/** The gateway app on 127.0.0.1:0; `coreMethods` and `clients` stand in for those calls to core (the others fail as `unavailable`). */
export async function startTestGateway(
  coreMethods: Partial<CoreClient> = {},
  clients: TestClients = {},
): Promise<{ url: string; server: http.Server; close(): Promise<void> }> {
  const base = gatewayTestDeps(coreMethods);
  const deps = { ...base, im: withMethods(base.im, clients.im ?? {}), campaigns: withMethods(base.campaigns, clients.campaigns ?? {}) };
  const interfaces = interfaceErrors(deps.log);
  const server = http.createServer({ maxHeaderSize: PARSER_HEADER_LIMIT }, withHeadChecks(interfaces, createGatewayApp(deps).callback()));
  server.maxHeadersCount = 0;
  limitRequestTime(
    server,
    interfaces,
    { idleMs: clients.requestIdleTimeoutMs ?? 60_000, minBytesPerSecond: clients.requestMinBytesPerSecond ?? 0, headMs: clients.requestHeadTimeoutMs },
    deps.log,
  );
  answerHeaderOverflow(server, interfaces);
  continueWhenRead(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A client whose every method fails as core being down. */
function noCore<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: (_, method) =>
      method === 'then'
        ? undefined
        : () => {
            throw new HermodError('unavailable', `${name} is not running in this test (${String(method)})`);
          },
  });
}

/** `client` with `methods` in place of its own. */
function withMethods<T extends object>(client: T, methods: Partial<T>): T {
  return new Proxy(client, { get: (target, method) => (method in methods ? methods[method as keyof T] : Reflect.get(target, method)) });
}
