/** Joins below this many bytes are Buffer.concat's: malloc serves them from memory it keeps anyway. */
const SMALL_JOIN_BYTES = 128 * 1024;

/**
 * The join of a flush's row pieces into the one buffer an engine insert
 * takes, written into memory kept from the flush before. Buffer.concat gave
 * each flush a fresh buffer of megabytes, which malloc maps anew above
 * hermod's mmap threshold (lib/malloc-env.ts) and the kernel faults in page
 * by page: 3.7 % of core's CPU through a campaign's fan-out
 * (bench/RESULTS.md, twenty-fifth session). A join's bytes are valid until
 * the next join: flushes run one at a time, and each waits for its inserts.
 * A join larger than `keepAtMostBytes` is not kept.
 */
export function createFlushBuffer(options: { keepAtMostBytes?: number } = {}): (pieces: readonly Buffer[]) => Buffer {
  const keepAtMost = options.keepAtMostBytes ?? 64 * 1024 * 1024;
  let kept: Buffer | undefined;
  return (pieces) => {
    let length = 0;
    for (const piece of pieces) length += piece.length;
    if (length < SMALL_JOIN_BYTES || length > keepAtMost) return Buffer.concat(pieces as Buffer[], length);
    if (!kept || kept.length < length) kept = Buffer.allocUnsafeSlow(Math.min(keepAtMost, Math.max(length, kept ? kept.length * 2 : 0)));
    let at = 0;
    for (const piece of pieces) at += piece.copy(kept, at);
    return kept.subarray(0, length);
  };
}
