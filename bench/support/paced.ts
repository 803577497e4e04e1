import { sleep } from './sleep';

/**
 * Calls `fire(i)` at `perSecond` for `seconds`, on schedule whether or not
 * earlier calls have finished (an open model: a slow service does not slow
 * the arrivals). Resolves when the last one has been fired.
 */
export async function paced(perSecond: number, seconds: number, fire: (i: number) => void): Promise<{ fired: number; seconds: number }> {
  const total = Math.round(perSecond * seconds);
  const start = performance.now();
  let i = 0;
  while (i < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * perSecond) / 1000) + 1);
    for (; i < due; i++) fire(i);
    await sleep(1);
  }
  return { fired: i, seconds: (performance.now() - start) / 1000 };
}
