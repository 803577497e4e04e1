import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseWrk, runWrk } from './run-wrk';

const REPORT = `Running 10s test @ https://gateway.hermod.example:8443/rest/sms/v2/messages
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    12.89ms   10.11ms  72.85ms   82.11%
    Req/Sec   688.83    294.14     1.32k    65.00%
  Latency Distribution
     50%  635.00us
     75%   16.59ms
     90%   25.86ms
     99%    1.20s
  41170 requests in 10.00s, 12.20MB read
  Socket errors: connect 0, read 3, write 1, timeout 2
  Non-2xx or 3xx responses: 17
Requests/sec:   4117.49
Transfer/sec:      1.22MB
`;

describe('wrk driver', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-run-wrk-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads requests/s, p50 and p99 in milliseconds whatever unit wrk chose, non-2xx answers and socket errors', () => {
    expect(parseWrk(REPORT)).toEqual({ rps: 4117.49, p50: 0.635, p99: 1200, requests: 41170, non2xx: 17, errors: 6 });
  });

  it('counts no non-2xx answers and no socket errors when wrk prints none', () => {
    const clean = REPORT.replace(/^.*(Socket errors|Non-2xx).*\n/gm, '');
    expect(parseWrk(clean)).toMatchObject({ non2xx: 0, errors: 0 });
  });

  it.skipIf(!fs.existsSync('/usr/bin/wrk'))('sends the method, headers and UTF-8 body byte for byte: te reo Māori, emoji and CJK', async () => {
    const body = JSON.stringify({ destination: '+6421000001', content: 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好 "quoted" \\ back' });
    const seen: { method?: string; auth?: string; body?: Buffer }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (seen.length < 5) seen.push({ method: req.method, auth: req.headers.authorization, body: Buffer.concat(chunks) });
        res.writeHead(req.url === '/refuse' ? 503 : 202, { 'content-length': 2 }).end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, 'localhost', r));
    const port = (server.address() as { port: number }).port;
    try {
      const request = { method: 'POST' as const, headers: { authorization: 'Basic YmVuY2g6a2lhLW9yYQ==' }, body };
      const figures = await runWrk({ ...request, url: `http://localhost:${port}/ok` }, { dir, name: 'ok', connections: 2, threads: 1, seconds: 1 });
      expect(figures.requests).toBeGreaterThan(0);
      expect(figures.non2xx).toBe(0);
      expect(seen[0]).toEqual({ method: 'POST', auth: 'Basic YmVuY2g6a2lhLW9yYQ==', body: Buffer.from(body, 'utf8') });
      const refused = await runWrk({ ...request, url: `http://localhost:${port}/refuse` }, { dir, name: 'refuse', connections: 2, threads: 1, seconds: 1 });
      expect(refused.non2xx).toBe(refused.requests);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
