import { HermodError } from '../../lib/errors';

/**
 * Request bodies are UTF-8 (RFC 8259 §8.1). A lenient decoder would turn a
 * stray Latin-1 byte into U+FFFD and send that to a handset; these refuse the
 * body instead, naming the byte where it goes wrong.
 */

function notUtf8(at: number): HermodError {
  return new HermodError('invalid_json', `request body is not valid UTF-8 at byte ${at}`);
}

/**
 * Index of the first byte of the first ill-formed or truncated sequence
 * (Unicode Table 3-7: shortest forms only, no surrogates, at most U+10FFFF),
 * or -1. Only run once TextDecoder has said there is a problem, for the position.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number,
      lo = 0x80,
      hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b === 0xe0) (need = 2), (lo = 0xa0);
    else if (b === 0xed) (need = 2), (hi = 0x9f);
    else if (b >= 0xe1 && b <= 0xef) need = 2;
    else if (b === 0xf0) (need = 3), (lo = 0x90);
    else if (b === 0xf4) (need = 3), (hi = 0x8f);
    else if (b >= 0xf1 && b <= 0xf3) need = 3;
    else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < lo || c > hi) return i;
      lo = 0x80;
      hi = 0xbf;
    }
    i += need + 1;
  }
  return -1;
}

/**
 * The whole body as text, or a 400 naming the first byte that is not UTF-8.
 * A leading byte-order mark is dropped (RFC 8259 §8.1 lets a parser ignore
 * it), as the streamed Campaign Manager bodies drop it, so every interface
 * takes the same bodies.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    throw notUtf8(Math.max(at, 0));
  }
}

/**
 * Checks a body chunk by chunk, however its characters are cut: TextDecoder in
 * stream mode carries a character's first bytes over to the next chunk. Those
 * bytes are held back here too, and handed on only once the character is
 * complete, so a parser never sees (and complains about) half of what may
 * turn out to be a bad sequence; a failure is placed from a character's start.
 */
export class Utf8StreamCheck {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  /** Absolute offset of the next chunk's first byte. */
  private offset = 0;
  /** An unfinished character at the end of what was seen (at most 3 bytes), not yet handed on. */
  private tail: Buffer = Buffer.alloc(0);

  /** The bytes now known to be whole characters (the held bytes first), or a 400 at the first bad byte. */
  push(chunk: Buffer): Buffer[] {
    try {
      this.decoder.decode(chunk, { stream: true });
    } catch {
      const at = firstInvalidUtf8(Buffer.concat([this.tail, chunk]));
      throw notUtf8(this.offset - this.tail.length + Math.max(at, 0));
    }
    this.offset += chunk.length;
    const held = this.tail;
    const tail = unfinished(held, chunk);
    if (tail.length > chunk.length) {
      // Still inside the same character: nothing to hand on yet.
      this.tail = tail;
      return [];
    }
    this.tail = tail;
    const whole = chunk.subarray(0, chunk.length - tail.length);
    return held.length > 0 ? [held, whole] : [whole];
  }

  /** After the last chunk: a body that stops inside a character is refused there. */
  end(): void {
    try {
      this.decoder.decode();
    } catch {
      throw notUtf8(this.offset - this.tail.length);
    }
  }
}

/** The bytes of a character begun but not finished at the end of `tail` + `chunk` (already known to be valid so far). */
function unfinished(tail: Buffer, chunk: Buffer): Buffer {
  const last = chunk.length >= 3 ? chunk.subarray(chunk.length - 3) : Buffer.concat([tail, chunk]).subarray(-3);
  for (let i = last.length - 1; i >= 0; i--) {
    const b = last[i]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: the start is further back
    const length = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    return length > last.length - i ? Buffer.from(last.subarray(i)) : Buffer.alloc(0);
  }
  return Buffer.alloc(0);
}
