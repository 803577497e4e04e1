import { seriesSum } from '../../test/support/metric-samples';
import { metricsText } from './metrics-text';

/**
 * Named series from a Prometheus text page, e.g. hermod's /metrics, each
 * summed over the processes of `hermod start` (the supervisor labels each
 * one's samples with its `process`). A name is a series as the page writes
 * it, with the labels that pick it if any (`hermod_role_heap_used_bytes{role="core"}`);
 * one missing is NaN.
 */
export async function serviceMetrics<K extends string>(url: string, names: Record<K, string>): Promise<Record<K, number>> {
  const text = await metricsText(url);
  return Object.fromEntries(Object.entries<string>(names).map(([k, name]) => [k, seriesSum(text, name)])) as Record<K, number>;
}
