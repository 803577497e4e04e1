const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * '250ms', '30s', '5m', '24h', '2d' → milliseconds; '0' alone needs no unit. Any other bare number
 * is refused: read as milliseconds, HERMOD_SHUTDOWN_GRACE=10 was a grace of 10 ms, not 10 s.
 */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) throw new Error(`not a duration: ${JSON.stringify(text)} (use e.g. 250ms, 30s, 5m, 24h)`);
  const [, amount, unit] = m;
  if (unit === undefined) {
    if (Number(amount) === 0) return 0;
    throw new Error(`${JSON.stringify(text.trim())} has no unit: write it with ms, s, m, h or d (${amount}s, ${amount}ms…)`);
  }
  return Math.round(Number(amount) * UNITS[unit]!);
}

/**
 * `60 days`, `36 hours`, `1 minute`, `20 seconds`, `600 ms`: how a duration
 * reads in a message to a person, in its largest whole unit.
 */
export function describeDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  for (const [unit, size] of [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
    ['second', 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size} ${unit}${ms === size ? '' : 's'}`;
  }
  return `${Math.round(ms / 1000)} seconds`;
}
