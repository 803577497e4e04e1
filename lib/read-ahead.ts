/**
 * An async iterable that asks its source for the next item as soon as it
 * hands one over, so the source's work (an engine executing the next block of
 * a query) runs while the consumer is still busy with the item before (sending
 * it on). At most one item is fetched ahead. A consumer that stops early waits
 * for that fetch to end before the source is closed: a source whose fetch runs
 * on another thread must not be torn down under it.
 */
export async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let pending = it.next();
  let finished = false;
  try {
    for (;;) {
      const step = await pending;
      if (step.done) {
        finished = true;
        return;
      }
      pending = it.next();
      yield step.value;
    }
  } finally {
    if (!finished) {
      // Stopped early, or a fetch failed: let the one in flight end, then close the source.
      await pending.then(
        () => it.return?.(),
        () => undefined,
      );
    }
  }
}
