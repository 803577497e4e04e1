import { randomUUID } from 'node:crypto';

/** Small helpers shared by the port contract suites. */

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
