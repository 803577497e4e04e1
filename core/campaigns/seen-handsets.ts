import { handsetKey } from '../domain/handset-key';

/** Two 32-bit FNV-1a hashes of the UTF-16 code units, with different offset bases: 64 bits, as two halves. */
function hash64(text: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return [a >>> 0, b >>> 0 || 1];
}

/**
 * The handsets an import has seen, by `handsetKey` (`+6425000001`, `6425000001` and `006425000001` are
 * one), in 8 bytes each: a 64-bit hash in an open-addressing table that doubles as it fills, instead of a
 * Set of strings (a million members would hold some 60 MB of them). Two handsets whose hashes are equal
 * would count as one; at a million members the chance of that is about 3 in 100 million.
 */
export function createSeenHandsets() {
  let slots = 1 << 12;
  let table = new Uint32Array(slots * 2);
  let size = 0;

  const place = (t: Uint32Array, mask: number, hi: number, lo: number): boolean => {
    for (let i = (hi ^ lo) & mask; ; i = (i + 1) & mask) {
      const at = i * 2;
      if (t[at + 1] === 0) {
        t[at] = hi;
        t[at + 1] = lo;
        return true;
      }
      if (t[at] === hi && t[at + 1] === lo) return false;
    }
  };

  return {
    /** True the first time a handset is added; false for a handset already seen, however written. */
    add(handset: string): boolean {
      const [hi, lo] = hash64(handsetKey(handset));
      if (!place(table, slots - 1, hi, lo)) return false;
      if (++size * 2 > slots) {
        const old = table;
        slots *= 2;
        table = new Uint32Array(slots * 2);
        for (let at = 0; at < old.length; at += 2) if (old[at + 1] !== 0) place(table, slots - 1, old[at]!, old[at + 1]!);
      }
      return true;
    },
    get size(): number {
      return size;
    },
  };
}
