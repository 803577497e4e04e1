/**
 * glibc malloc settings for the processes `hermod start` forks, unless the
 * operator set their own. chDB (inside core) allocates through glibc from its
 * own threads: with glibc's defaults every thread may get an arena of its own,
 * and the threshold above which a block is mapped (and given back when freed)
 * rises with every large free, so blocks of a batch's size are carved from
 * the arenas and freed memory stays resident. Measured in the embedded soak:
 * core held 60–70 MB less from the start and grew a little slower (bench/RESULTS.md,
 * ninth session). Other C libraries ignore these variables.
 */
export const MALLOC_DEFAULTS: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
  MALLOC_TRIM_THRESHOLD_: '131072',
};

/** The malloc variables to give a forked process: the defaults above, except any the environment already sets. */
export function mallocEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(MALLOC_DEFAULTS).filter(([name]) => env[name] === undefined));
}
