import { createHash, randomFillSync } from 'node:crypto';

const HEX = Buffer.from('0123456789abcdef', 'latin1');
const POOL_IDS = 256;
const pool = Buffer.allocUnsafe(16 * POOL_IDS);
let next = POOL_IDS;
const text = Buffer.alloc(36, '-');
// Where each of the 16 bytes' two hex digits go, around the four dashes.
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * A random version-4 UUID (RFC 9562), as a flat string of 36 bytes.
 *
 * Node's `crypto.randomUUID()` returns its UUID as a rope of about twenty
 * concatenated pieces, which V8 keeps as they are for as long as the string
 * lives: about 490 bytes of heap where a flat 36-character string takes 56.
 * Message ids live in hot state's maps (statuses, reply routing, callbacks)
 * for minutes to a day, hundreds of thousands of them, so the difference is
 * most of what those maps hold. This writes the digits into a buffer and
 * reads them out once, from a pool of random bytes filled 256 ids at a time.
 */
export function uuid(): string {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const at = 16 * next++;
  return written(pool, at);
}

/**
 * A UUID in the version-4 layout whose bits come from a SHA-256 of `parts`
 * instead of from chance: the same parts give the same id, every time and in
 * every process (a message sent with an Idempotency-Key, tried again). Its
 * fourth group starts `bee` (HASHED_MARK), so history can be asked for such
 * ids alone (one random id in 1,024 looks the same, which costs nothing but a
 * row read); the other 116 bits are the hash's, as unlikely to meet another
 * id as random ones. Flat, as `uuid()`.
 */
export function hashedUuid(...parts: string[]): string {
  const hash = createHash('sha256');
  // A NUL apart: no part holds one, so ('ab', 'c') and ('a', 'bc') differ.
  for (const [i, part] of parts.entries()) hash.update(i === 0 ? part : `\0${part}`);
  const bytes = hash.digest();
  bytes[8] = 0xbe;
  bytes[9] = (bytes[9]! & 0x0f) | 0xe0;
  return written(bytes, 0);
}

/** The first characters of a hashedUuid's fourth group (from its 20th character, 1-based, as SQL counts). */
export const HASHED_MARK = 'bee';

/** Whether `id` carries hashedUuid's mark: every hashed id does, and one random id in 1,024. */
export function hasHashedMark(id: string): boolean {
  return id.startsWith(HASHED_MARK, 19);
}

/** Sets the version and variant bits of the 16 bytes at `at`, and writes them out as a UUID. */
function written(bytes: Buffer, at: number): string {
  bytes[at + 6] = (bytes[at + 6]! & 0x0f) | 0x40;
  bytes[at + 8] = (bytes[at + 8]! & 0x3f) | 0x80;
  for (let i = 0; i < 16; i++) {
    const byte = bytes[at + i]!;
    text[AT[i]!] = HEX[byte >> 4]!;
    text[AT[i]! + 1] = HEX[byte & 15]!;
  }
  return text.toString('latin1');
}
