import { metricsText } from './metrics-text';

/**
 * Named gauges from a Prometheus text page, e.g. hermod's /metrics: the
 * supervisor aggregates its processes (heap sizes summed; event-loop delay
 * percentiles averaged over the processes, its maximum the largest). A name
 * is a series as the page writes it, with its labels if it has any
 * (`hermod_role_heap_used_bytes{role="core"}`); one missing is NaN.
 */
export async function serviceMetrics<K extends string>(url: string, names: Record<K, string>): Promise<Record<K, number>> {
  const text = await metricsText(url);
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) ([^ ]+)/.exec(line);
    if (m) values.set(m[1]!, Number(m[2]));
  }
  return Object.fromEntries(Object.entries<string>(names).map(([k, name]) => [k, values.get(name) ?? Number.NaN])) as Record<K, number>;
}
