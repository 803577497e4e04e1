/**
 * At most `max` credential checks from one client address at core at once;
 * the others wait their turn, in order (at most `maxWaiting` an address,
 * past which `take` answers undefined: refuse). A check of a password costs
 * core a quarter of a second of a thread: without this, a burst of parallel
 * guesses for made-up names from one address all reached core before any
 * had failed (the failure count per address sees only ended checks), and
 * stalled every tenant's logins and sends (a trial: 143 of 300 reached core,
 * others' requests answered 504). Waiting rather than refusing keeps many
 * first logins of different applications from one address (a gateway
 * restarted behind a load balancer) going through, a few at a time; guesses
 * that wait meet the address's back-off once it has failed enough.
 */
/** Gives a slot back (once; later calls do nothing). */
export type Release = () => void;

export function createAddressCheckSlots(max = 8, maxWaiting = 1024) {
  const addresses = new Map<string, { running: number; waiting: (() => void)[] }>();
  return {
    /**
     * A slot of the address: its release at once when one is free, a promise of it when the address's checks are
     * all running (its turn comes in order), undefined when too many wait already.
     */
    take(address: string): Release | Promise<Release> | undefined {
      let slots = addresses.get(address);
      if (!slots) addresses.set(address, (slots = { running: 0, waiting: [] }));
      const held = slots;
      const release = (): Release => {
        let released = false;
        return () => {
          if (released) return;
          released = true;
          const next = held.waiting.shift();
          // Handed over: the running count stays the same.
          if (next) next();
          else if (--held.running === 0) addresses.delete(address);
        };
      };
      if (held.running < max) {
        held.running++;
        return release();
      }
      if (held.waiting.length >= maxWaiting) return undefined;
      return new Promise<Release>((resolve) => held.waiting.push(() => resolve(release())));
    },
    /** Addresses with checks running or waiting, for tests. */
    get size(): number {
      return addresses.size;
    },
  };
}
