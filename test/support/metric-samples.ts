/** A sample of a Prometheus text page: its metric's name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** Every sample of a Prometheus text page (hermod's /metrics), in its order. */
export function samplesOf(text: string): Sample[] {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(l);
      if (!m) throw new Error(`not a sample line: ${l}`);
      return { name: m[1]!, labels: Object.fromEntries([...(m[2] ?? '').matchAll(LABEL)].map((p) => [p[1]!, p[2]!])), value: Number(m[3]) };
    });
}

/**
 * The sum of the samples of a series written as a page writes one, `name` or `name{label="value",…}`: every sample of
 * that name whose labels include those, whatever others it has (under `hermod start`, the `process` of each role).
 * NaN when there is none.
 */
export function seriesSum(text: string | readonly Sample[], series: string): number {
  const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?$/.exec(series);
  if (!m) throw new Error(`not a series: ${series}`);
  const wanted = [...(m[2] ?? '').matchAll(LABEL)].map((p) => [p[1]!, p[2]!] as const);
  const found = (typeof text === 'string' ? samplesOf(text) : text).filter((s) => s.name === m[1] && wanted.every(([k, v]) => s.labels[k] === v));
  return found.length === 0 ? Number.NaN : found.reduce((sum, s) => sum + s.value, 0);
}

/** The sums of a metric's samples by the values of one of their labels (`structure`, `application`, …), over every process. */
export function sumsBy(text: string | readonly Sample[], name: string, label: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const s of typeof text === 'string' ? samplesOf(text) : text)
    if (s.name === name && s.labels[label] !== undefined) sums.set(s.labels[label]!, (sums.get(s.labels[label]!) ?? 0) + s.value);
  return sums;
}
