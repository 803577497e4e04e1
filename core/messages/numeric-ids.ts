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

export function createNumericIds(instance: number, now: () => number = Date.now) {
  if (!Number.isInteger(instance) || instance < 0 || instance > MAX_CORE_INSTANCE) throw new RangeError(`core instance must be 0..${MAX_CORE_INSTANCE}`);
  let lastMs = 0;
  let sequence = 0;
  return function next(): number {
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
}
