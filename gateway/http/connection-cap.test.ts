import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import { parseTrustedProxies } from '../../lib/trusted-proxies';
import { capConnectionsPerAddress } from './connection-cap';

const log = createLogger({ test: 'connection-cap' });

async function serverWithCap(limit: number, trusted: string[] = []): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((_req, res) => res.end('Kia ora 👋🏽'));
  capConnectionsPerAddress(server, limit, parseTrustedProxies(trusted), log);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as net.AddressInfo).port };
}

/** Opens a socket and says, a moment later, whether the server still holds it open. */
async function openSocket(port: number): Promise<{ socket: net.Socket; heldOpen: () => Promise<boolean> }> {
  const socket = net.connect(port, '127.0.0.1');
  let closed = false;
  socket.on('close', () => (closed = true));
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, heldOpen: async () => (await new Promise((r) => setTimeout(r, 150)), !closed) };
}

describe('capConnectionsPerAddress', () => {
  const sockets: net.Socket[] = [];
  const servers: http.Server[] = [];
  afterEach(() => {
    for (const s of sockets.splice(0)) s.destroy();
    for (const s of servers.splice(0)) s.close();
  });

  it('closes a client’s connections past the cap as they open, and takes a new one once one of its own closes', async () => {
    const { server, port } = await serverWithCap(3);
    servers.push(server);
    const opened = [];
    for (let i = 0; i < 5; i++) opened.push(await openSocket(port));
    sockets.push(...opened.map((o) => o.socket));
    expect(await Promise.all(opened.map((o) => o.heldOpen()))).toEqual([true, true, true, false, false]);
    opened[0]!.socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const again = await openSocket(port);
    sockets.push(again.socket);
    expect(await again.heldOpen()).toBe(true);
  });

  it('does not cap a trusted proxy, which carries many clients', async () => {
    const { server, port } = await serverWithCap(2, ['127.0.0.0/8']);
    servers.push(server);
    const opened = [];
    for (let i = 0; i < 5; i++) opened.push(await openSocket(port));
    sockets.push(...opened.map((o) => o.socket));
    expect(await Promise.all(opened.map((o) => o.heldOpen()))).toEqual([true, true, true, true, true]);
  });
});
