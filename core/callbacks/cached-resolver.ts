import type { ResolveHost } from './callback-url';
import { FifoMap } from '../../lib/fifo-map';

export interface CachedResolverOptions {
  /** How long an answer is used before the name is asked again (Java's default for DNS is 30 s). */
  ttlMs: number;
  /** Most names kept; the one asked longest ago makes room (default 10,000). */
  maxNames?: number;
  now?: () => number;
}

/**
 * Answers a host name from the last answer while it is younger than `ttlMs`;
 * concurrent asks for one name share one lookup, and failures are not kept.
 * Callbacks go to a few receivers thousands of times a second: without it,
 * every callback was a getaddrinfo on libuv's four threads, and a slow DNS
 * server delayed every callback by its round trip.
 */
export function cachedResolver(resolve: ResolveHost, options: CachedResolverOptions): ResolveHost {
  const now = options.now ?? Date.now;
  const maxNames = options.maxNames ?? 10_000;
  const answers = new FifoMap<string, { at: number; addresses: Promise<string[]> }>();
  return (host) => {
    const t = now();
    const kept = answers.get(host);
    if (kept && t - kept.at < options.ttlMs) return kept.addresses;
    const addresses = resolve(host);
    answers.delete(host);
    if (answers.size >= maxNames) answers.shift();
    const entry = { at: t, addresses };
    answers.set(host, entry);
    addresses.catch(() => {
      if (answers.get(host) === entry) answers.delete(host);
    });
    return addresses;
  };
}
