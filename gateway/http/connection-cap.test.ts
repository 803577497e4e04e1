import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import { parseTrustedProxies } from '../../lib/trusted-proxies';
import { capConnectionsPerAddress, clientOf } from './connection-cap';

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

  it('counts an IPv6 client by its /64, and an IPv4 one alike however its socket writes it', () => {
    expect(clientOf('2001:db8:1:2:aaaa::1')).toBe('2001:0db8:0001:0002::/64');
    expect(clientOf('2001:db8:1:2:ffff:ffff:ffff:fffe')).toBe('2001:0db8:0001:0002::/64');
    expect(clientOf('2001:db8:1:3::1')).not.toBe(clientOf('2001:db8:1:2::1'));
    expect(clientOf('::1')).toBe('0000:0000:0000:0000::/64');
    expect(clientOf('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientOf('203.0.113.9')).toBe('203.0.113.9');
  });
});
