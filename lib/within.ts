/** A wait that ran out: what `within` rejects with. */
export class TimedOut extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'TimedOut';
  }
}

/** `promise`, or a rejection with TimedOut once `ms` have passed without its answer; the timer goes with either. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(ms)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
