import v8 from 'node:v8';

/**
 * Caps how far this process's V8 heap grows past what its last full
 * collection kept, in per cent, before it collects again (0: V8's own
 * choice). V8 sizes that step from its allocation rate: under a campaign's
 * fan-out core's heap reached about four times its live set between full
 * collections (210 MB live, 750 MB committed), which is most of its RSS.
 * V8 reads the flag at each collection, so setting it once the process runs
 * takes effect from the next one.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${Math.trunc(percent)}`);
}
