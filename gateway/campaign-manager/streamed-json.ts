import { PassThrough, type Writable } from 'node:stream';
import type { Context } from 'koa';

/**
 * Answers 200 with JSON text (strings or UTF-8 bytes) written fragment by fragment as `fragments`
 * yields it, with backpressure from the client's connection, so a million-row
 * answer never exists as one string. The first fragment is awaited before the
 * status is sent, so a failure before any data still gets a proper error
 * answer; a failure later cuts the connection, leaving the client with
 * truncated JSON rather than a plausible but incomplete answer.
 */
export async function respondWithStreamedJson(ctx: Context, fragments: AsyncIterable<string | Uint8Array>): Promise<void> {
  const it = fragments[Symbol.asyncIterator]();
  const first = await it.next();
  const out = new PassThrough();
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = out;
  void (async () => {
    let closed = false;
    out.once('close', () => (closed = true));
    try {
      for (let step = first; !step.done && !closed; step = await it.next()) {
        if (!out.write(step.value)) await drainedOrClosed(out);
      }
      if (!closed) out.end();
    } catch (err) {
      out.destroy(err as Error);
    } finally {
      if (closed) await it.return?.(undefined);
    }
  })();
}

/**
 * Resolves when `out` drains or closes (the client went away), rejects when it
 * fails, and removes its three listeners whichever comes first: a race of
 * events.once left the loser's close and error listeners behind at every wait,
 * thousands on a long answer to a slow client (MaxListenersExceededWarning).
 */
function drainedOrClosed(out: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settled = () => {
      out.off('drain', done);
      out.off('close', done);
      out.off('error', failed);
    };
    const done = () => {
      settled();
      resolve();
    };
    const failed = (err: Error) => {
      settled();
      reject(err);
    };
    out.on('drain', done);
    out.on('close', done);
    out.on('error', failed);
  });
}
