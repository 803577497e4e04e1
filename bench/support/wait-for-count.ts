import { sleep } from './sleep';

/**
 * Polls `count` until it reaches `target` and then holds still for `settleMs`
 * (messages still in flight when the driver stopped land too), or until
 * `timeoutS` has passed. Prints progress every 5 s while short of the target.
 */
export async function waitForCount(
  what: string,
  count: () => number | Promise<number>,
  target: number,
  o: { timeoutS: number; settleMs?: number; pollMs?: number },
): Promise<{ count: number; done: boolean; waitedMs: number }> {
  const settleMs = o.settleMs ?? 1000;
  const pollMs = o.pollMs ?? 100;
  const from = performance.now();
  const deadline = from + o.timeoutS * 1000;
  let last = await count();
  let stillSince = performance.now();
  let lastPrint = from;
  for (;;) {
    const now = performance.now();
    if (last >= target && now - stillSince >= settleMs) return { count: last, done: true, waitedMs: now - from };
    if (now > deadline) return { count: last, done: last >= target, waitedMs: now - from };
    if (last < target && now - lastPrint >= 5000) {
      console.log(`  ${what}: ${last} of ${target} so far, ${Math.round((now - from) / 1000)} s waited`);
      lastPrint = now;
    }
    await sleep(pollMs);
    const next = await count();
    if (next !== last) stillSince = performance.now();
    last = next;
  }
}
