/** Calls `fn` every `ms` until the returned function is called. */
export function every(ms: number, fn: () => void): () => void {
  const timer = setInterval(fn, ms);
  return () => clearInterval(timer);
}
