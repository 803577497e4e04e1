import { seriesSum, sumsBy } from '../../test/support/metric-samples';
import { metricsText } from './metrics-text';

/**
 * hermod_memory_entries by structure (recent messages, hot-state maps, owed
 * callbacks in memory: what each in-process structure holds, summed over the
 * service's processes) and the owed callbacks waiting on disk
 * (hermod_callbacks_owed_on_disk), from a /metrics page; {} when the page
 * cannot be read.
 */
export async function memoryEntries(url: string): Promise<Record<string, number>> {
  const text = await metricsText(url).catch(() => '');
  const entries: Record<string, number> = Object.fromEntries(sumsBy(text, 'hermod_memory_entries', 'structure'));
  const onDisk = seriesSum(text, 'hermod_callbacks_owed_on_disk');
  if (!Number.isNaN(onDisk)) entries.callbacks_owed_on_disk = onDisk;
  return entries;
}

/** The largest structures first, e.g. `callbacks_owed 113241, state:last_messages 40580, …`. */
export function formatEntries(entries: Record<string, number>): string {
  return Object.entries(entries)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
}
