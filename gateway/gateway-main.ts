import { continueWhenRead } from './http/continue-when-read';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/log';
import { createAuthenticator } from './auth';
import { createFailedAuthLimiter } from './failed-auth-limiter';
import { createCoreClient } from './core-client';
import { createGrpcCredentials } from '../lib/grpc-credentials';
import { createCampaignsClient } from './campaigns-client';
import { createImClient } from './im-client';
import { createGatewayApp, interfaceErrors } from './app';
import { answerHeaderOverflow, PARSER_HEADER_LIMIT, withHeadChecks } from './http/header-overflow';
import { loadOrCreateCertificate } from './tls';
import { httpsServerOptions } from './https-options';
import { createClosingServer } from './http/closing-server';
import { parseTrustedProxies } from '../lib/trusted-proxies';
import { capConnectionsPerAddress } from './http/connection-cap';
import { limitHeadTime, limitRequestTime } from './http/request-timeouts';
import { listenError } from '../lib/listen-error';
import { httpRequests } from '../lib/metrics';
import { boundedMethod } from './http/bounded-method';
import { redirectToHttps } from './http/https-redirect';

export interface RunningGateway {
  httpsPort: number;
  httpPort: number;
  /** For the supervisor's ready message. Under `hermod start` on port 0, every gateway gets the port the primary allocated for the first. */
  ports: { https: number; http: number };
  /** Stops accepting, lets in-flight requests finish, then closes the core channel. */
  stop(): Promise<void>;
}

export async function runGateway(config: Readonly<Config>, log: Logger): Promise<RunningGateway> {
  const tls = await loadOrCreateCertificate(config.dataDir, config.tlsCertFile, config.tlsKeyFile);
  const grpcCredentials = createGrpcCredentials(config.grpcTls).channel();
  const core = createCoreClient(config.coreAddress, grpcCredentials, { batchMax: config.gatewayBatchMax, batchDelayMs: config.gatewayBatchDelayMs });
  const auth = createAuthenticator(core, config.authCacheMs, undefined, createFailedAuthLimiter(config.authFailures));
  const campaigns = createCampaignsClient(config.coreAddress, grpcCredentials);
  const im = createImClient(config.coreAddress, grpcCredentials);
  const trustedProxies = parseTrustedProxies(config.trustedProxies);
  const app = createGatewayApp({
    core,
    auth,
    log,
    campaigns,
    im,
    maxBodyBytes: config.maxBodyBytes,
    maxImportBytes: config.maxImportBytes,
    carriers: config.channels,
    scheduleHorizonMs: config.scheduleHorizonMs,
    trustedProxies,
  });

  const interfaces = interfaceErrors(log);
  // Kept-alive clients are told to close from the stop on, so the stop ends before its grace does.
  const secureClosing = createClosingServer();
  const plainClosing = createClosingServer();
  const secure = https.createServer(httpsServerOptions(tls), secureClosing.handle(withHeadChecks(interfaces, app.callback())));

  // A client that stops sending in the middle of a request (a truncated body), or trickles it under the minimum rate, is
  // answered 408 and dropped, not waited for; a large import that keeps sending is never cut short.
  limitRequestTime(secure, interfaces, { idleMs: config.requestIdleTimeoutMs, minBytesPerSecond: config.requestMinBytesPerSecond }, log);
  const plain = http.createServer(
    { maxHeaderSize: PARSER_HEADER_LIMIT },
    plainClosing.handle(
      withHeadChecks(interfaces, (req, res) => {
        const status = redirectToHttps(req, res, (secure.address() as AddressInfo | null)?.port ?? config.httpsPort);
        httpRequests.inc({ interface: 'http_redirect', route: 'unmatched', method: boundedMethod(req.method), status: String(status) });
      }),
    ),
  );
  // Every field of a head is kept (the parser's 64 KB bounds them), so withHeadChecks measures all of it.
  secure.maxHeadersCount = 0;
  plain.maxHeadersCount = 0;
  limitHeadTime(plain);
  // The plain port only redirects: a socket that sends nothing for 10 s is closed (nothing else would close it).
  plain.setTimeout(10_000);
  // Before TLS: one client's idle sockets could otherwise hold every descriptor the gateway has.
  capConnectionsPerAddress(secure, config.maxConnectionsPerAddress, trustedProxies, log);
  capConnectionsPerAddress(plain, config.maxConnectionsPerAddress, trustedProxies, log);
  // Heads over even the parser's limit get their 431 in the interface's error shape where the request line is known, not empty.
  answerHeaderOverflow(secure, interfaces);
  answerHeaderOverflow(plain, interfaces);
  continueWhenRead(secure);
  continueWhenRead(plain);
  await listen(secure, config.httpsPort, config.host, 'HERMOD_HTTPS_PORT');
  await listen(plain, config.httpPort, config.host, 'HERMOD_HTTP_PORT');
  const httpsPort = (secure.address() as AddressInfo).port;
  const httpPort = (plain.address() as AddressInfo).port;
  log.info('gateway listening', {
    https: `https://${config.host}:${httpsPort}`,
    http: `http://${config.host}:${httpPort}`,
    selfSignedCertificate: tls.selfSigned,
    core: config.coreAddress,
  });

  return {
    httpsPort,
    httpPort,
    ports: { https: httpsPort, http: httpPort },
    async stop() {
      await Promise.all([secureClosing.close(secure), plainClosing.close(plain)]);
      core.close();
      campaigns.close();
      im.close();
    },
  };
}

function listen(server: http.Server | https.Server, port: number, host: string, setting: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: Error): void => reject(listenError(err, setting, host, port, 'another gateway', 'HERMOD_HOST'));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}
