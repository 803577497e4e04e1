import { describe, expect, it } from 'vitest';
import net from 'node:net';
import { ConfigError } from './config';
import { listenError } from './listen-error';

/** What binding `host` does, as the error a listener gets. */
const bindError = (host: string): Promise<unknown> =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', resolve);
    server.listen(0, host, () => server.close(() => resolve(undefined)));
  });

describe('a listener that cannot bind', () => {
  it('names the host setting, in one line, for a host that does not resolve or is not this machine’s (operator trial)', async () => {
    const unresolved = listenError(await bindError('not.a.host.invalid'), 'HERMOD_HTTPS_PORT', 'not.a.host.invalid', 8443, 'another gateway', 'HERMOD_HOST');
    expect(unresolved).toBeInstanceOf(ConfigError);
    expect((unresolved as Error).message).toMatch(/^HERMOD_HOST: not\.a\.host\.invalid does not resolve to an address of this machine \(E[A-Z_]+\)/);

    const foreign = listenError(await bindError('10.99.99.99'), 'HERMOD_METRICS_PORT', '10.99.99.99', 9464, 'another process', 'HERMOD_HOST');
    expect((foreign as Error).message).toBe('HERMOD_HOST: 10.99.99.99 is not an address of this machine');
  });

  it('names the port setting for a port another process holds', async () => {
    const held = net.createServer();
    await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
    const port = (held.address() as net.AddressInfo).port;
    const err = await new Promise((resolve) => net.createServer().once('error', resolve).listen(port, '127.0.0.1'));
    held.close();
    expect((listenError(err, 'HERMOD_HTTPS_PORT', '127.0.0.1', port, 'another gateway', 'HERMOD_HOST') as Error).message).toMatch(
      /^HERMOD_HTTPS_PORT: port \d+ on 127\.0\.0\.1 is in use by another process \(another gateway/,
    );
  });
});
