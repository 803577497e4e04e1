import { randomUUID } from 'node:crypto';

/** Small helpers shared by the port contract suites. */

/** Polls until `check` returns true, or fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise with its settle functions, to hold a handler until the test lets it go. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void; reject(err: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A name no other test uses, so suites can share a real broker or database. */
export const unique = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;
