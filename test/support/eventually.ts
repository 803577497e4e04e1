/**
 * Polls `probe` until it returns something other than `undefined` or `false`,
 * and resolves with that. A probe that throws (an assertion, a refused
 * connection) is tried again; after `timeoutMs` it fails with what the last
 * try said. It is asked every `intervalMs`: by default every 5 ms when it
 * answers at once (a look at what a test has collected, so a short-lived
 * state is not missed), every 100 ms when it returns a promise (a request to
 * a running service, which should not be asked hundreds of times a second).
 */
export async function eventually<T>(probe: () => T | Promise<T>, timeoutMs = 20_000, intervalMs?: number): Promise<Exclude<T, undefined | false>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    let answer: T | Promise<T> | undefined;
    try {
      answer = probe();
      const value = await answer;
      if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last === undefined ? `no value yet from ${probe.toString().slice(0, 300)}` : String(last);
      throw new Error(`condition not met within ${timeoutMs} ms: ${why}`, { cause: last });
    }
    await new Promise((r) => setTimeout(r, intervalMs ?? (answer instanceof Promise ? 100 : 5)));
  }
}
