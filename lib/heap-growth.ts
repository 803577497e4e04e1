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

/**
 * The node options of a process `hermod start` forks: the supervisor's own
 * (`execArgv`), with V8's largest young-generation semi-space set to
 * `semiSpaceMb` (0: left to V8) unless they or NODE_OPTIONS already set one. V8 sizes the young generation when the
 * process starts, so it cannot be set from inside the process as the heap
 * growth can.
 */
export function childExecArgv(execArgv: readonly string[], nodeOptions: string | undefined, semiSpaceMb: number): string[] {
  const own = [...execArgv];
  const named = [...own, ...(nodeOptions ?? '').split(/\s+/)].some((a) => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(a));
  if (semiSpaceMb > 0 && !named) own.push(`--max-semi-space-size=${semiSpaceMb}`);
  return own;
}
