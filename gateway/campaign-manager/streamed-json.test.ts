import type { AddressInfo } from 'node:net';
import http from 'node:http';
import type { PassThrough } from 'node:stream';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { respondWithStreamedJson } from './streamed-json';

const ROW = `${JSON.stringify({ id: 0, text: 'x'.repeat(1000) })},`;

/** A server answering with `rows` rows of about 1 KB, noting the answer's listeners at every row once it has drained. */
async function serve(rows: number, failAt = Number.POSITIVE_INFINITY) {
  const seen = { close: [] as number[], error: [] as number[], drain: [] as number[], drains: 0, returned: false };
  let out: PassThrough | undefined;
  async function* fragments(): AsyncGenerator<string> {
    try {
      yield '[';
      for (let i = 0; i < rows; i++) {
        if (out && seen.drains > 0) {
          // sampled once the answer flows to the client (Koa's own listeners are on it by then)
          seen.close.push(out.listenerCount('close'));
          seen.error.push(out.listenerCount('error'));
          seen.drain.push(out.listenerCount('drain'));
        }
        if (i === failAt) setImmediate(() => out?.destroy(new Error('the answer failed')));
        yield ROW;
      }
      yield '{}]';
    } finally {
      seen.returned = true;
    }
  }
  const app = new Koa();
  app.silent = true; // a client going away is expected here
  app.use(async (ctx) => {
    await respondWithStreamedJson(ctx, fragments());
    out = ctx.body as PassThrough;
    out.on('drain', () => seen.drains++);
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, seen, out: () => out as PassThrough, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

/** Reads the answer a chunk at a time with a pause after each, as a slow client does; stops after `stopAfter` bytes when given. */
function readSlowly(url: string, stopAfter = Number.POSITIVE_INFINITY): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes >= stopAfter) {
          req.destroy();
          resolve(bytes);
          return;
        }
        res.pause();
        setImmediate(() => res.resume());
      });
      res.on('end', () => resolve(bytes));
      res.on('error', reject);
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
  });
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('respondWithStreamedJson', () => {
  let server: http.Server | undefined;
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  afterEach(() => {
    server?.close();
    process.off('warning', onWarning);
    warnings.length = 0;
  });

  it('waits for a slow client without piling up close, error or drain listeners on the answer', async () => {
    process.on('warning', onWarning);
    const rows = 5000;
    const s = await serve(rows);
    server = s.server;
    const bytes = await readSlowly(s.url);
    await new Promise((r) => setImmediate(r));
    expect(bytes).toBe(1 + rows * ROW.length + 3);
    expect(s.seen.drains).toBeGreaterThan(20); // the client was slower than the writer, many times
    for (const event of ['close', 'error', 'drain'] as const) {
      const counts = s.seen[event];
      const baseline = counts[0] as number;
      expect(Math.max(...counts), event).toBeLessThanOrEqual(baseline + 1);
      expect(s.out().listenerCount(event), event).toBeLessThanOrEqual(baseline + 1);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('stops reading the rows when the client goes away mid-answer', async () => {
    const s = await serve(100_000);
    server = s.server;
    await readSlowly(s.url, 200_000);
    await until(() => s.seen.returned);
    expect(s.seen.returned).toBe(true);
    expect(s.seen.close.length).toBeLessThan(100_000);
  });

  it('stops reading the rows and cuts the connection when the answer fails while waiting for the client', async () => {
    const s = await serve(100_000, 1000);
    server = s.server;
    const read = await readSlowly(s.url).then(
      (bytes) => bytes,
      (err: Error) => err,
    );
    await until(() => s.seen.returned);
    expect(s.seen.returned).toBe(true);
    expect(s.seen.close.length).toBeLessThan(100_000);
    expect(read).toBeInstanceOf(Error); // truncated, not a plausible end
  });
});
