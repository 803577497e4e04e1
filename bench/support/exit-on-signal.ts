/**
 * Ctrl-C or `timeout` ends a bench through process.exit, so the services it
 * started are killed on the way out (test/support/hermod-process.ts): left to
 * the signal's default, node exits without its exit handlers and hermod runs
 * on.
 */
export function exitOnSignal(): void {
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
}
