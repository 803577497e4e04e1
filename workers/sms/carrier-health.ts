/** How one SMS carrier is doing, as this worker has seen it: throttling back-off, errors in a row, the last error. */
export interface CarrierHealth {
  /** Until when submits wait because the carrier answered ESME_RTHROTTLED (epoch ms). */
  readonly backoffUntil: number;
  /** Whether it is left out of routing until its cool-down ends (past its error threshold). */
  coolingDown(now: number): boolean;
  succeeded(): void;
  throttled(now: number): void;
  failed(now: number, message: string): void;
  /** Accepted submits in the last whole second. */
  submitsPerSecond(now: number): number;
  countSubmits(now: number, n: number): void;
  readonly lastError: string;
  readonly lastErrorAt: number;
}

const MAX_BACKOFF_MS = 5000;
const FIRST_BACKOFF_MS = 50;

/**
 * `threshold` throttles or errors in a row put the carrier aside for
 * `cooldownMs`, so messages not yet submitted go to their route's next
 * carrier; after the cool-down it is tried again, and one success clears it.
 */
export function createCarrierHealth(threshold: number, cooldownMs: number): CarrierHealth {
  let inARow = 0;
  let throttlesInARow = 0;
  let coolUntil = 0;
  let backoffUntil = 0;
  let lastError = '';
  let lastErrorAt = 0;
  let second = 0;
  let thisSecond = 0;
  let lastSecond = 0;
  const strike = (now: number): void => {
    inARow++;
    if (inARow >= threshold) {
      coolUntil = now + cooldownMs;
      inARow = 0;
    }
  };
  return {
    get backoffUntil() {
      return backoffUntil;
    },
    coolingDown: (now) => now < coolUntil,
    succeeded() {
      inARow = 0;
      throttlesInARow = 0;
    },
    throttled(now) {
      // Answers to submits already under way when the first throttle came belong to the same back-off.
      if (now < backoffUntil) return;
      throttlesInARow++;
      backoffUntil = now + Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.min(throttlesInARow - 1, 16));
      lastError = 'ESME_RTHROTTLED';
      lastErrorAt = now;
      strike(now);
    },
    failed(now, message) {
      lastError = message;
      lastErrorAt = now;
      strike(now);
    },
    countSubmits(now, n) {
      const s = Math.floor(now / 1000);
      if (s !== second) {
        lastSecond = s === second + 1 ? thisSecond : 0;
        second = s;
        thisSecond = 0;
      }
      thisSecond += n;
    },
    submitsPerSecond(now) {
      const s = Math.floor(now / 1000);
      return s === second ? lastSecond : s === second + 1 ? thisSecond : 0;
    },
    get lastError() {
      return lastError;
    },
    get lastErrorAt() {
      return lastErrorAt;
    },
  };
}
