import type { AddressInfo } from 'node:net';
import { ConfigError, type Config } from '../../lib/config';
import { createGrpcCredentials } from '../../lib/grpc-credentials';
import type { Logger } from '../../lib/log';
import { listenError } from '../../lib/listen-error';
import { createConsoleClient } from './console-client';
import { createConsoleServer } from './console-server';

/** Why the console is not served, or undefined when it can be. */
export function consoleDisabledReason(config: Readonly<Config>): string | undefined {
  return config.admin.password ? undefined : 'HERMOD_ADMIN_PASSWORD is not set (the console is served only behind a password)';
}

/**
 * The operator console role: a small HTTP server on HERMOD_ADMIN_HOST:HERMOD_ADMIN_PORT
 * (127.0.0.1:9465) behind HTTP Basic, reading everything from core's admin API.
 */
export async function runConsole(config: Readonly<Config>, log: Logger) {
  const disabled = consoleDisabledReason(config);
  if (disabled) throw new ConfigError(`operator console not started: ${disabled}`);
  const client = createConsoleClient(config.coreAddress, createGrpcCredentials(config.grpcTls).channel());
  const server = createConsoleServer({ user: config.admin.user, password: config.admin.password, client, log });
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    const failed = (err: Error): void =>
      reject(listenError(err, 'HERMOD_ADMIN_PORT', config.admin.host, config.admin.port, 'another console', 'HERMOD_ADMIN_HOST'));
    server.once('error', failed);
    // Exclusive: under `hermod start` this is a cluster worker, and the port is the console's alone.
    server.listen({ host: config.admin.host, port: config.admin.port, exclusive: true }, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.admin.host.includes(':') ? `[${config.admin.host}]` : config.admin.host;
  log.info('operator console listening', { url: `http://${host}:${port}/`, user: config.admin.user });
  return {
    ports: { admin: port },
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      client.close();
    },
  };
}
