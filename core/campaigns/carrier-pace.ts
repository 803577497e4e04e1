/**
 * How many messages the campaign fan-out lets wait for the SMS workers: as
 * many as they send in `seconds`, measured while the fan-out waits for them
 * (the backlog falls by what they send), between `minBacklog` and
 * `maxBacklog` (HERMOD_CAMPAIGN_MAX_BACKLOG), the latter until something was
 * measured. Everything sent after a campaign's pages (another campaign's
 * members, an API client's message) waits behind that backlog: 5,000 was a
 * second on a fast SMSC and most of a minute at 100 submits a second.
 */
export interface CarrierPace {
  /** A wait for the backlog to fall begins (observations of different waits are not compared). */
  startWait(): void;
  /** The backlog now, while waiting. */
  observe(backlog: number): void;
  /** The backlog to wait for, and the most messages to hand over at once. */
  target(): number;
}

export function createCarrierPace(options: { maxBacklog: number; minBacklog?: number; seconds?: number; now?: () => number }): CarrierPace {
  const now = options.now ?? (() => performance.now());
  const seconds = options.seconds ?? 2;
  const minBacklog = Math.min(options.minBacklog ?? 200, options.maxBacklog);
  /** Messages a second the SMS workers sent, smoothed; undefined until measured. */
  let rate: number | undefined;
  let last: { backlog: number; at: number } | undefined;
  return {
    startWait() {
      last = undefined;
    },
    observe(backlog) {
      const at = now();
      const before = last;
      last = { backlog, at };
      // A backlog that grew had messages added meanwhile (another core, an API send): it says nothing of the rate.
      if (!before || at - before.at < 20 || backlog > before.backlog) return;
      const sample = ((before.backlog - backlog) * 1000) / (at - before.at);
      rate = rate === undefined ? sample : rate * 0.8 + sample * 0.2;
    },
    target() {
      if (rate === undefined) return options.maxBacklog;
      return Math.max(minBacklog, Math.min(options.maxBacklog, Math.round(rate * seconds)));
    },
  };
}
