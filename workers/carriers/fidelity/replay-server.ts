import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
}

/**
 * A provider stand-in for fidelity tests: answers each request with the
 * documented example answer for its path (exact path, else the `*` answer)
 * and records what the carrier sent, so the test compares it with the
 * documented request.
 */
export async function startReplayServer(answers: Record<string, { status: number; body: unknown }>) {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
      });
      const answer = answers[url.pathname] ?? answers['*'] ?? { status: 404, body: {} };
      const payload = JSON.stringify(answer.body);
      res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }).end(payload);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
