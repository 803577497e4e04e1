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
