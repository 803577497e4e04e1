const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** '250ms', '30s', '5m', '24h', '2d' or a bare number of milliseconds → milliseconds. */
export function parseDuration(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) throw new Error(`not a duration: ${JSON.stringify(text)} (use e.g. 250ms, 30s, 5m, 24h)`);
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms']!);
}
