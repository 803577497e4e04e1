export interface Spread {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Count, nearest-rank percentiles and maximum of `values`; NaN where there are none. */
export function spread(values: number[]): Spread {
  const v = Float64Array.from(values).sort();
  const at = (q: number): number => (v.length === 0 ? NaN : v[Math.min(v.length - 1, Math.ceil(q * v.length) - 1)]!);
  return { count: v.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: v.length === 0 ? NaN : v[v.length - 1]! };
}
