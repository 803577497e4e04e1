import { eventually } from './eventually';
import type { Reply } from './https-client';

/**
 * Clients that each send with an Idempotency-Key, `atOnce` at a time, while
 * `kill()` (a kill -9) lands once a quarter of the requests were answered;
 * then each retries what was not answered `ok`, with the same key, until it
 * is. Resolves with each request's first reply (undefined: the connection
 * failed), and the `id` of its answer in the end.
 */
export async function keyedRequestsAcrossAKill(o: {
  count: number;
  atOnce: number;
  /** Request i, with its key; undefined when the connection failed. */
  send: (i: number) => Promise<Reply | undefined>;
  ok: number;
  kill: () => void;
  retryForMs: number;
}): Promise<{ first: (Reply | undefined)[]; unanswered: number[]; ids: Map<number, string | number> }> {
  const first: (Reply | undefined)[] = new Array(o.count);
  let next = 0;
  let answered = 0;
  let killed = false;
  await Promise.all(
    Array.from({ length: o.atOnce }, async () => {
      while (next < o.count) {
        const i = next++;
        first[i] = await o.send(i);
        answered += 1;
        if (!killed && answered >= o.count / 4) {
          killed = true;
          o.kill();
        }
      }
    }),
  );
  const unanswered = first.flatMap((r, i) => (r?.status === o.ok ? [] : [i]));
  const ids = new Map<number, string | number>();
  for (const [i, r] of first.entries()) if (r?.status === o.ok) ids.set(i, r.json.id);
  await Promise.all(
    unanswered.map((i) =>
      eventually(
        async () => {
          const r = await o.send(i);
          if (r?.status !== o.ok) return undefined;
          ids.set(i, r.json.id);
          return true;
        },
        o.retryForMs,
        250,
      ),
    ),
  );
  return { first, unanswered, ids };
}
