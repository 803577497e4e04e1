/**
 * Integer message ids for the interfaces whose clients expect numbers
 * (Gateway v1, Campaign Manager). Many of those clients are JavaScript, so an
 * id must stay at or below 2^53 - 1: 41 bits of milliseconds since 2024-01-01
 * (enough until 2093), 4 bits of core instance, 8 bits of sequence (256 ids
 * per millisecond per core; the clock is borrowed from when a burst needs more).
 */
const EPOCH = Date.UTC(2024, 0, 1);
const SEQUENCE_BITS = 8;
const INSTANCE_BITS = 4;
export const MAX_CORE_INSTANCE = (1 << INSTANCE_BITS) - 1;

export interface NumericIds {
  (): number;
  /**
   * Reserves ids for `count` campaign messages: whole milliseconds of this
   * instance's sequence space, 256 ids each (campaign-message-ids.ts turns a
   * position into its id). Returns the first id; later ids come after the block.
   */
  reserve(count: number): number;
  /** Never hands out an id at or below `id` (blocks reserved before a restart). */
  skipPast(id: number): void;
}

const PER_MS = 2 ** (INSTANCE_BITS + SEQUENCE_BITS);

export function createNumericIds(instance: number, now: () => number = Date.now): NumericIds {
  if (!Number.isInteger(instance) || instance < 0 || instance > MAX_CORE_INSTANCE) throw new RangeError(`core instance must be 0..${MAX_CORE_INSTANCE}`);
  let lastMs = 0;
  let sequence = 0;
  const next = function next(): number {
    const ms = Math.max(now() - EPOCH, lastMs);
    if (ms === lastMs) {
      sequence++;
      if (sequence >> SEQUENCE_BITS) {
        // Out of ids for this millisecond: move on to the next one.
        lastMs = ms + 1;
        sequence = 0;
      }
    } else {
      lastMs = ms;
      sequence = 0;
    }
    return (lastMs * 2 ** INSTANCE_BITS + instance) * 2 ** SEQUENCE_BITS + sequence;
  };
  next.reserve = (count: number): number => {
    const first = Math.max(now() - EPOCH, lastMs + 1);
    const span = Math.max(1, Math.ceil(count / 2 ** SEQUENCE_BITS));
    // The block is used up as far as next() is concerned: it continues after it.
    lastMs = first + span - 1;
    sequence = 2 ** SEQUENCE_BITS - 1;
    return (first * 2 ** INSTANCE_BITS + instance) * 2 ** SEQUENCE_BITS;
  };
  next.skipPast = (id: number): void => {
    const ms = Math.floor(id / PER_MS);
    if (ms >= lastMs) {
      lastMs = ms;
      sequence = 2 ** SEQUENCE_BITS - 1;
    }
  };
  return next;
}
