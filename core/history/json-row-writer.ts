import { dateTime64 } from './rows';

/** The escapes JSON.stringify writes with one letter after the backslash. */
const SHORT_ESCAPES: (number | undefined)[] = [];
SHORT_ESCAPES[0x08] = 0x62; // \b
SHORT_ESCAPES[0x09] = 0x74; // \t
SHORT_ESCAPES[0x0a] = 0x6e; // \n
SHORT_ESCAPES[0x0c] = 0x66; // \f
SHORT_ESCAPES[0x0d] = 0x72; // \r
SHORT_ESCAPES[0x22] = 0x22; // \"
SHORT_ESCAPES[0x5c] = 0x5c; // \\
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** Distinct values `repeatedField` keeps at most (then it starts again). */
const MAX_KEPT = 256;

/**
 * Writes JSON objects of flat values straight into UTF-8 bytes, with the
 * bytes `JSON.stringify` would give for the same object and key order: no
 * object, no string per row, no encoding afterwards. The history rows of a
 * campaign (a message row and five event rows a message) are mostly ASCII
 * ids, statuses and times, which go byte by byte; other text is encoded as
 * UTF-8 with JSON's escapes in place, and only a string holding a lone
 * surrogate goes through `JSON.stringify` (its `\udxxx` escape) and
 * `Buffer.write`.
 */
export class JsonRowWriter {
  private buf: Buffer;
  private pos = 0;
  /** Whether the object being written has a field yet (a comma goes before the next). */
  private hasField = false;
  /** `repeatedField`'s values, as they are written. */
  private readonly kept = new Map<string, Buffer>();
  /** `timeField`'s second, and the bytes of its date and time of day. */
  private second = Number.NaN;
  private secondPrefix: Uint8Array = new Uint8Array(0);

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  get length(): number {
    return this.pos;
  }

  /** Forgets what was written; the bytes are kept for the next rows. */
  reset(): void {
    this.pos = 0;
  }

  /** The bytes written so far, as a Buffer of their own (the writer's are reused). */
  copy(from = 0, to = this.pos): Buffer {
    const out = Buffer.allocUnsafe(to - from);
    this.buf.copy(out, 0, from, to);
    return out;
  }

  /** Copies [from, to) of what was written into `target` at `at`; the number of bytes. */
  copyInto(target: Buffer, at: number, from: number, to: number): number {
    return this.buf.copy(target, at, from, to);
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.pos++] = b;
  }

  beginObject(): void {
    this.byte(0x7b);
    this.hasField = false;
  }

  endObject(): void {
    this.byte(0x7d);
  }

  /**
   * A field: `key` as `JSON.stringify` writes it in an object (`"key":`, a
   * constant from `jsonKey`), then the value. Left out when the value is
   * undefined, as `JSON.stringify` leaves it out.
   */
  field(key: Uint8Array, value: unknown): void {
    if (value === undefined) return;
    if (typeof value === 'string') {
      this.key(key);
      this.string(value);
    } else if (typeof value === 'number') {
      this.key(key);
      this.number(value);
    } else {
      const text = JSON.stringify(value) as string | undefined;
      if (text === undefined) return; // a function or a symbol: left out, as in an object
      this.key(key);
      this.utf8(text);
    }
  }

  /**
   * A string field whose values repeat from row to row (an application's id,
   * a status, a channel): each value's bytes are kept after its first row
   * and copied from then on. Values that do not repeat belong in `field`.
   */
  repeatedField(key: Uint8Array, value: unknown): void {
    if (typeof value !== 'string') return this.field(key, value);
    const kept = this.kept.get(value);
    this.key(key);
    if (kept) return this.bytes(kept);
    const start = this.pos;
    this.string(value);
    if (this.kept.size >= MAX_KEPT) this.kept.clear();
    this.kept.set(value, this.copy(start));
  }

  /** A DateTime64 field (rows.ts `dateTime64`), its date and time of day kept for the second. */
  timeField(key: Uint8Array, ms: number): void {
    const t = Math.trunc(ms);
    if (!Number.isFinite(t) || t === 0) return this.field(key, dateTime64(ms));
    const second = Math.floor(t / 1000);
    if (second !== this.second) {
      // `dateTime64` of the second's start, without its closing "000\"" (and so exactly its text).
      const text = JSON.stringify(dateTime64(second * 1000));
      this.secondPrefix = Buffer.from(text.slice(0, -4), 'latin1');
      this.second = second;
    }
    this.key(key);
    this.bytes(this.secondPrefix);
    this.room(4);
    const milli = t - second * 1000;
    const b = this.buf;
    b[this.pos++] = 0x30 + Math.floor(milli / 100);
    b[this.pos++] = 0x30 + (Math.floor(milli / 10) % 10);
    b[this.pos++] = 0x30 + (milli % 10);
    b[this.pos++] = 0x22;
  }

  private bytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < bytes.length; i++) b[p++] = bytes[i]!;
    this.pos = p;
  }

  private key(key: Uint8Array): void {
    this.room(key.length + 1);
    const b = this.buf;
    let p = this.pos;
    if (this.hasField) b[p++] = 0x2c;
    this.hasField = true;
    for (let i = 0; i < key.length; i++) b[p++] = key[i]!;
    this.pos = p;
  }

  private string(s: string): void {
    const n = s.length;
    // The most any UTF-16 unit takes in JSON's UTF-8 is six bytes (`\u001f`, a lone surrogate's `\udc00`).
    this.room(n * 6 + 2);
    const b = this.buf;
    const start = this.pos;
    let p = start;
    b[p++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x20 && c < 0x80 && c !== 0x22 && c !== 0x5c) {
        b[p++] = c;
      } else if (c < 0x80) {
        // JSON.stringify's escapes: a short one where there is one, else \u00xx in lower case.
        b[p++] = 0x5c;
        const short = SHORT_ESCAPES[c];
        if (short !== undefined) b[p++] = short;
        else {
          b[p++] = 0x75;
          b[p++] = 0x30;
          b[p++] = 0x30;
          b[p++] = HEX[c >> 4]!;
          b[p++] = HEX[c & 15]!;
        }
      } else if (c < 0x800) {
        b[p++] = 0xc0 | (c >> 6);
        b[p++] = 0x80 | (c & 63);
      } else if (c < 0xd800 || c > 0xdfff) {
        b[p++] = 0xe0 | (c >> 12);
        b[p++] = 0x80 | ((c >> 6) & 63);
        b[p++] = 0x80 | (c & 63);
      } else {
        const low = c < 0xdc00 && i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (low < 0xdc00 || low > 0xdfff) {
          // A lone surrogate: JSON.stringify writes it as an escape.
          this.pos = start;
          this.utf8(JSON.stringify(s));
          return;
        }
        const cp = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        b[p++] = 0xf0 | (cp >> 18);
        b[p++] = 0x80 | ((cp >> 12) & 63);
        b[p++] = 0x80 | ((cp >> 6) & 63);
        b[p++] = 0x80 | (cp & 63);
        i++;
      }
    }
    b[p++] = 0x22;
    this.pos = p;
  }

  private number(n: number): void {
    if (!Number.isFinite(n)) return this.ascii('null');
    if (Number.isInteger(n) && n >= 0 && n < 1e15) {
      // Digits by hand for the counts and ids rows hold: String(n) would make a string a field.
      this.room(16);
      let digits = 1;
      for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
      const b = this.buf;
      let p = this.pos + digits;
      this.pos = p;
      let x = n;
      do {
        const q = Math.floor(x / 10);
        b[--p] = 0x30 + (x - q * 10);
        x = q;
      } while (x > 0);
      return;
    }
    this.ascii(String(n === 0 ? 0 : n)); // -0 is written 0, as JSON.stringify writes it
  }

  private ascii(s: string): void {
    this.room(s.length);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  private utf8(s: string): void {
    this.room(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  private room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}

/** A key as `JSON.stringify` writes it before its value in an object: `"name":`. */
export function jsonKey(name: string): Uint8Array {
  return Buffer.from(`${JSON.stringify(name)}:`, 'utf8');
}
