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
