/**
 * Nanoseconds a row of `encode`ing one batch again and again, for at least
 * `totalRows` rows in all (at least 20 batches), after up to 50 batches of
 * warm-up: the journal's encoding benches.
 */
export function nsPerRow<M, E>(encode: (messages: M[], events: E[]) => unknown, batch: { messages: M[]; events: E[] }, totalRows: number): number {
  const rowsPerBatch = batch.messages.length + batch.events.length;
  const batches = Math.max(20, Math.round(totalRows / rowsPerBatch));
  for (let i = 0; i < Math.min(batches, 50); i++) encode(batch.messages, batch.events);
  const start = process.hrtime.bigint();
  for (let i = 0; i < batches; i++) encode(batch.messages, batch.events);
  return Number(process.hrtime.bigint() - start) / (batches * rowsPerBatch);
}
