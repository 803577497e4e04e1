import type { CoreClient } from './core-client';
import { HermodError } from '../lib/errors';
import { FifoMap } from '../lib/fifo-map';
import { createFailedAuthLimiter, isRefusal, type FailedAuthLimiter } from './failed-auth-limiter';
import { createAddressCheckSlots, type Release } from './address-check-slots';

export interface Caller {
  applicationId: string;
  applicationName: string;
}

/**
 * Checks credentials through core and remembers a success for a while, keyed
 * by the exact header, so a busy client does not pay for a password hash on
 * every request. Concurrent first requests with the same header share one check.
 * A success is asked about again after a few seconds, cheaply: an API key is
 * a hash lookup for core, and a password is not hashed again but named by the
 * tag core gave of the stored password it matched (a changed password's tag
 * no longer matches, and the password is checked in full). So a revoked key
 * or a changed password stops working within about API_KEY_CACHE_MS; only a
 * core that gives no tag leaves a password's success cached for `cacheMs`.
 * Once a success is due to be asked about again it is, in the background,
 * while requests go on being served from it: a check that is slow under load
 * must not hold every request of a busy client behind it. That lasts one
 * more such period at most for a cheap check (then a request waits for it),
 * `staleMs` for a full password check from a core without tags. A check that
 * fails drops the entry at once, and so does a recheck whose tag no longer
 * matches, before the password is checked in full.
 *
 * A check that is not served from the cache first asks `limiter` (failed
 * checks per client address and per application name): a client that failed
 * too often is refused with 429 and Retry-After, and core is not asked, so
 * wrong passwords cannot keep core's threads busy hashing them. While it
 * backs off, what the cache would serve is refused too (from that address
 * only): a guess answered 429 when wrong and served when right would tell.
 */
export function createAuthenticator(
  core: CoreClient,
  cacheMs: number,
  staleMs = Math.max(cacheMs * 10, 60_000),
  limiter: FailedAuthLimiter = createFailedAuthLimiter(),
) {
  /** Successful checks by header; `servedTo`, the client addresses each was served to (at most MAX_SERVED_TO). */
  const cache = new FifoMap<string, { caller: Caller; expires: number; staleUntil: number; tag: string; servedTo: Set<string> }>();
  const served = (entry: { servedTo: Set<string> } | undefined, from: string): void => {
    if (entry && entry.servedTo.size < MAX_SERVED_TO) entry.servedTo.add(from);
  };
  // A key is a hash lookup for core, a password recheck a comparison of tags; a full password check is a quarter
  // of a second of a thread. So these are asked again after a few seconds, and a revoked key or a changed
  // password stops working about then, not a minute later.
  const recheckMs = Math.min(cacheMs, API_KEY_CACHE_MS);
  const inflight = new Map<string, Promise<Caller | undefined>>();
  const slots = createAddressCheckSlots();
  const MAX_ENTRIES = 10_000;

  type Checked = { caller: Caller; tag: string } | undefined;
  const answered = (res: Awaited<ReturnType<CoreClient['authenticate']>>): Checked =>
    res.ok && res.application ? { caller: { applicationId: res.application.id, applicationName: res.application.name }, tag: res.passwordTag } : undefined;

  /** A password with the tag of the stored password it matched is asked about by that tag; not matching any more, in full. */
  const check = async (header: string, tag: string): Promise<Checked> => {
    const basic = parseBasic(header);
    if (!basic) return answered(await core.authenticate({ credential: { $case: 'apiKey', value: apiKeyOf(header) } }));
    if (tag) {
      const again = answered(await core.authenticate({ credential: { $case: 'basicRecheck', value: { name: basic.name, passwordTag: tag } } }));
      if (again) return again;
      // The stored password changed: nothing more is served from the old check while this one is checked in full.
      cache.delete(header);
    }
    return answered(await core.authenticate({ credential: { $case: 'basic', value: basic } }));
  };

  /** One check per header at a time; its outcome updates the cache. Without `from`, a check of a header that was served (not limited). */
  const checkAndRemember = (header: string, from?: string): Promise<Caller | undefined> => {
    let pending = inflight.get(header);
    if (!pending) {
      const tag = cache.get(header)?.tag ?? '';
      let checked: Promise<Checked>;
      if (from === undefined) checked = check(header, tag);
      else {
        // A few of an address's checks at core at once; the limiter is asked once this one's turn comes, so guesses
        // that waited meet the back-off their address earned meanwhile.
        const run = (release: Release): Promise<Checked> => {
          const attempt = limiter.begin(from, parseBasic(header)?.name);
          if (isRefusal(attempt)) {
            release();
            throw backingOff(attempt.retryAfterMs);
          }
          return check(header, tag)
            .then(
              (outcome) => {
                attempt.ended(outcome !== undefined);
                return outcome;
              },
              (err: unknown) => {
                attempt.ended(undefined);
                throw err;
              },
            )
            .finally(release);
        };
        const slot = slots.take(from);
        if (slot === undefined) throw backingOff(1000);
        checked = typeof slot === 'function' ? run(slot) : slot.then(run);
      }
      pending = checked
        .then((outcome) => {
          if (!outcome) {
            cache.delete(header);
            return undefined;
          }
          if (!cache.has(header) && cache.size >= MAX_ENTRIES) cache.shift();
          const now = Date.now();
          // A password without a tag (a core from before them) can only be checked in full: cached for cacheMs,
          // served while checked again up to staleMs. Cheap checks: served stale one period more at most.
          const full = parseBasic(header) !== undefined && !outcome.tag;
          const keptMs = full ? cacheMs : recheckMs;
          cache.set(header, {
            caller: outcome.caller,
            expires: now + keptMs,
            staleUntil: now + (full ? staleMs : 2 * keptMs),
            tag: outcome.tag,
            servedTo: cache.get(header)?.servedTo ?? new Set(),
          });
          return outcome.caller;
        })
        .finally(() => inflight.delete(header));
      inflight.set(header, pending);
    }
    return pending;
  };

  return {
    /**
     * The caller for an Authorization header, or a 401 error (429 when `from`, the
     * client's address, or the application named failed too often). `allowApiKey` for Intelligent Messaging.
     */
    async authenticate(header: string | undefined, from: string, allowApiKey = false): Promise<Caller> {
      if (!header) throw new HermodError('unauthorized', 'missing credentials');
      if (!allowApiKey && !/^Basic /i.test(header)) throw new HermodError('unauthorized', 'HTTP Basic credentials required');
      const hit = cache.get(header);
      // An address in back-off is refused even what the cache would serve, a guess must not be told it is right,
      // unless the cache served it to that address before: its own client (others behind the same NAT still
      // trying an old password during a rotation must not take the rolled-out ones down with them).
      if (limiter.size > 0 && !hit?.servedTo.has(from)) {
        const waitMs = limiter.backingOff(from, parseBasic(header)?.name);
        if (waitMs > 0) throw backingOff(waitMs);
      }
      const now = Date.now();
      if (hit && hit.expires > now) {
        served(hit, from);
        return hit.caller;
      }
      if (hit && hit.staleUntil > now) {
        // Served as it was; checked again meanwhile (a failure to reach core keeps the entry until it is too old).
        void checkAndRemember(header).catch(() => undefined);
        served(hit, from);
        return hit.caller;
      }
      const caller = await checkAndRemember(header, from);
      if (!caller) throw new HermodError('unauthorized', 'invalid credentials');
      served(cache.get(header), from);
      return caller;
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

function backingOff(retryAfterMs: number): HermodError {
  const seconds = Math.ceil(retryAfterMs / 1000);
  return new HermodError('too_many_auth_failures', `too many failed authentications; retry after ${seconds} seconds`, { retryAfterSeconds: seconds });
}

/** Client addresses a cached check remembers having been served to (a client's instances behind a few NATs). */
const MAX_SERVED_TO = 64;

/** Longest an API key's or a tagged password's successful check is served without asking core again. */
const API_KEY_CACHE_MS = 5_000;

export function parseBasic(header: string): { name: string; password: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { name: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** The API key an Authorization header carries: `Bearer <key>`, `ApiKey <key>`, or the key alone. */
export function apiKeyOf(header: string): string {
  return header.replace(/^(Bearer|ApiKey)\s+/i, '').trim();
}
