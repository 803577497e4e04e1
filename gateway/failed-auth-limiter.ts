import { createHash } from 'node:crypto';
import { FifoMap } from '../lib/fifo-map';

export interface FailedAuthLimits {
  /** Failures an application name may have; the last of them starts its back-off. */
  perName: number;
  /** Failures a client address may have (over every name it tries); the last of them starts its back-off. */
  perAddress: number;
  /** The first back-off; it doubles with each failure after it. */
  backoffMs: number;
  /** The longest back-off; a key with no failure for this long after its back-off is forgotten. */
  maxBackoffMs: number;
}

export const DEFAULT_FAILED_AUTH_LIMITS: FailedAuthLimits = { perName: 5, perAddress: 20, backoffMs: 10_000, maxBackoffMs: 15 * 60_000 };

/** A refused attempt: how long to wait. */
export interface Refusal {
  retryAfterMs: number;
}

interface Entry {
  failures: number;
  /** Checks started and not yet ended: they count as failures until they end. */
  pending: number;
  lastFailureAt: number;
  blockedUntil: number;
}

/** A claim on a check the limiter let through; `ended` says how it went (undefined: no answer, core out of reach). */
export interface Attempt {
  ended(ok: boolean | undefined): void;
}

/** Entries kept per kind of key; an attacker's random names push out the oldest ones. */
const MAX_ENTRIES = 10_000;

/**
 * Counts failed authentications per application name from one client address,
 * and per client address, so a client guessing passwords is refused before its
 * guesses reach core (each costs core an scrypt hash, a quarter of a second of
 * a thread). Each key may fail `perName` (`perAddress`) times; that last
 * failure starts a back-off of `backoffMs`, doubling with each failure after
 * it up to `maxBackoffMs`. While a key is backing off every attempt it takes
 * part in is refused, the right password too (or guessing would go on,
 * answered only later); a name is refused only from the address that failed,
 * so nobody locks an application out by knowing its name. A name's checks in
 * flight count as failures until they end, so a burst of parallel guesses
 * gets no more checks than the allowance. A success forgets its name's
 * failures, not its address's (one known password must not let an address
 * guess others). Memory is bounded: each map keeps its latest
 * `MAX_ENTRIES` keys; names are kept as SHA-256 digests.
 */
export function createFailedAuthLimiter(limits: FailedAuthLimits = DEFAULT_FAILED_AUTH_LIMITS, now: () => number = Date.now) {
  const byName = new FifoMap<string, Entry>();
  const byAddress = new FifoMap<string, Entry>();

  /** The entry of a key, forgotten once quiet for `maxBackoffMs` after its back-off. */
  const entryOf = (map: FifoMap<string, Entry>, key: string, create: boolean): Entry | undefined => {
    const t = now();
    let entry = map.get(key);
    if (entry && entry.pending === 0 && t - Math.max(entry.lastFailureAt, entry.blockedUntil) > limits.maxBackoffMs) {
      map.delete(key);
      entry = undefined;
    }
    if (entry || !create) return entry;
    if (map.size >= MAX_ENTRIES) map.shift();
    entry = { failures: 0, pending: 0, lastFailureAt: 0, blockedUntil: 0 };
    map.set(key, entry);
    return entry;
  };

  /**
   * How long this key refuses a new check: while backing off, or (`inFlight`) while its remaining allowance is
   * all in flight. An address's checks in flight do not count: many first logins of different applications
   * from one address at once (a gateway restarted behind a load balancer) are not guesses.
   */
  const refusalOf = (entry: Entry | undefined, allowance: number, inFlight: boolean): number => {
    if (!entry) return 0;
    const wait = entry.blockedUntil - now();
    if (wait > 0) return wait;
    return inFlight && entry.pending >= Math.max(1, allowance - entry.failures) ? 1000 : 0;
  };

  const fail = (map: FifoMap<string, Entry>, key: string, entry: Entry, allowance: number): void => {
    entry.failures += 1;
    entry.lastFailureAt = now();
    const over = entry.failures - allowance;
    if (over >= 0) entry.blockedUntil = entry.lastFailureAt + Math.min(limits.backoffMs * 2 ** Math.min(over, 30), limits.maxBackoffMs);
    // Kept at the back of the map, so the keys under attack are the last to be pushed out.
    if (!map.delete(key) && map.size >= MAX_ENTRIES) map.shift();
    map.set(key, entry);
  };

  const nameKeyOf = (address: string, name: string): string =>
    createHash('sha256').update(address).update('\u0000').update(name.normalize('NFC')).digest('base64');

  return {
    /**
     * How long `address` (and `name` from it) is backing off now, 0 when not: asked even for a credential
     * served from the cache, or a guess from there would be told the right password by its answer.
     */
    backingOff(address: string, name: string | undefined): number {
      if (byAddress.size === 0 && byName.size === 0) return 0;
      return Math.max(
        refusalOf(entryOf(byAddress, address, false), limits.perAddress, false),
        name === undefined || byName.size === 0 ? 0 : refusalOf(entryOf(byName, nameKeyOf(address, name), false), limits.perName, false),
      );
    },
    /**
     * Asks to check a credential: a Refusal, or an Attempt to end with the outcome.
     * `name` is the Basic user (undefined for an API key, limited by address only).
     */
    begin(address: string, name: string | undefined): Refusal | Attempt {
      // A name is counted per address: wrong passwords from one address must not lock its application out for everyone else.
      const nameKey = name === undefined ? undefined : nameKeyOf(address, name);
      const wait = Math.max(
        refusalOf(entryOf(byAddress, address, false), limits.perAddress, false),
        nameKey === undefined ? 0 : refusalOf(entryOf(byName, nameKey, false), limits.perName, true),
      );
      if (wait > 0) return { retryAfterMs: wait };
      const entries: [FifoMap<string, Entry>, string, Entry, number][] = [[byAddress, address, entryOf(byAddress, address, true)!, limits.perAddress]];
      if (nameKey !== undefined) entries.push([byName, nameKey, entryOf(byName, nameKey, true)!, limits.perName]);
      for (const [, , entry] of entries) entry.pending += 1;
      let done = false;
      return {
        ended(ok) {
          if (done) return;
          done = true;
          for (const [map, key, entry, allowance] of entries) {
            entry.pending -= 1;
            if (ok === false) fail(map, key, entry, allowance);
            else if (ok && map === byName) {
              entry.failures = 0;
              entry.blockedUntil = 0;
            }
            if (entry.failures === 0 && entry.pending === 0 && map.get(key) === entry) map.delete(key);
          }
        },
      };
    },
    /** Keys remembered, for tests and metrics. */
    get size(): number {
      return byName.size + byAddress.size;
    },
  };
}

export type FailedAuthLimiter = ReturnType<typeof createFailedAuthLimiter>;

export const isRefusal = (r: Refusal | Attempt): r is Refusal => 'retryAfterMs' in r;
