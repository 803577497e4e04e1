import net from 'node:net';

/**
 * Sends exactly these bytes on a connection of their own (fetch writes only
 * valid HTTP, and joins repeated headers into one line), and resolves with the
 * whole answer once the server closes: its status, its header block and its body.
 */
export function rawExchange(url: string, request: Buffer | string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: text.slice(split + 4) });
    });
    socket.on('error', reject);
    socket.end(request);
  });
}
