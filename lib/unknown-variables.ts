/** Variables hermod reads outside the configuration, or only when another one is set. */
const READ_ELSEWHERE = ['HERMOD_ROLE', 'HERMOD_CHANNEL', 'HERMOD_BUILD', 'HERMOD_CORE_RUNS_WORKERS', 'HERMOD_BOOTSTRAP_PASSWORD', 'HERMOD_BOOTSTRAP_API_KEY'];

export interface UnknownVariable {
  name: string;
  /** The setting it is most likely a slip for, if one is close. */
  didYouMean?: string;
}

/**
 * An environment that remembers every name read from it: what the
 * configuration read is what hermod knows, so a name it never read is none.
 */
export function recordingEnv(env: Record<string, string | undefined>): { env: Record<string, string | undefined>; read: Set<string> } {
  const read = new Set<string>();
  const recorded = new Proxy(env, {
    get: (target, key) => {
      if (typeof key === 'string') read.add(key);
      return Reflect.get(target, key);
    },
    has: (target, key) => {
      if (typeof key === 'string') read.add(key);
      return Reflect.has(target, key);
    },
  });
  return { env: recorded, read };
}

/**
 * The `HERMOD_` variables set that no setting reads: a slip such as
 * `HERMOD_SMSC_OUTCOMS` left its setting at its default, unsaid (a
 * misspelt HERMOD_REDIS_URL points at 127.0.0.1:6379, perhaps another
 * deployment's Redis), each with the known name nearest it.
 */
export function unknownHermodVariables(env: Record<string, string | undefined>, read: ReadonlySet<string>): UnknownVariable[] {
  const known = [...new Set([...read, ...READ_ELSEWHERE])].filter((n) => n.startsWith('HERMOD_'));
  return Object.keys(env)
    .filter((name) => name.startsWith('HERMOD_') && !known.includes(name))
    .sort()
    .map((name) => {
      let best: { name: string; distance: number } | undefined;
      for (const k of known) {
        const d = distance(name, k);
        if (d <= Math.max(2, Math.floor(k.length / 6)) && (!best || d < best.distance)) best = { name: k, distance: d };
      }
      return best ? { name, didYouMean: best.name } : { name };
    });
}

/** Edits (insert, delete, replace, or swap two neighbours) between two names. */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  return rows[a.length]![b.length]!;
}
