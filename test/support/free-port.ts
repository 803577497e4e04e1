import net from 'node:net';

/**
 * A TCP port that was free a moment ago on 127.0.0.1, for engines that must be
 * told their ports before they start and cannot bind port 0 and say which
 * they got: Kafka's static controller quorum names every node's port, and a
 * Redis Cluster node's port 0 turns TCP off. Everything hermod starts binds
 * port 0 and reports its port instead (a port picked here can be taken by
 * another process before its user binds it).
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A free TCP port below Linux's ephemeral range (32768 and up), for a port
 * that must be written into a file before its user starts: every other test
 * binds port 0, which takes ephemeral ports, so one picked here is not handed
 * to another test's process between this check and its use, as a freePort()
 * port can be when many tests run side by side.
 */
export async function freePortBelowEphemeral(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}
