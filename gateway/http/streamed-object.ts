import { HermodError } from '../../lib/errors';
import { Utf8StreamCheck } from './strict-utf8';
import { checkNoLoneSurrogates, mayHaveLoneSurrogate } from './lone-surrogate';
import { MAX_JSON_DEPTH } from './json-depth';

export interface StreamedObjectHandler {
  /** A top-level field other than the streamed array (or the streamed field itself when its value is not an array), with its parsed JSON value. */
  field(name: string, value: unknown): void;
  /** The next elements of the streamed array, parsed, in order. `firstIndex` is the zero-based index of elements[0]. Awaited before more input is read (backpressure). */
  elements(elements: unknown[], firstIndex: number): void | Promise<void>;
}

export interface StreamedObjectOptions {
  /** Name of the top-level field whose array is streamed, e.g. 'members'. */
  arrayField: string;
  /** Total body size limit in bytes; beyond it throw HermodError('body_too_large', ...). */
  maxBytes: number;
  /** Deliver elements in groups of at most this many (default 5000). */
  batchSize?: number;
  /**
   * Most bytes one element of the array, or one other field's value, may take (default 64 KiB): far
   * more than any member or field can hold valid, so one that is larger is refused (422) as soon as it
   * passes this, before the rest of it is read or held.
   */
  maxElementBytes?: number;
}

/**
 * Most bytes of JSON the parsed elements waiting for a batch may have come
 * from: a few thousand members are a few hundred KB, but 5,000 members of up
 * to `maxElementBytes` each would be 320 MB held for one request.
 */
const HELD_BYTES = 1024 * 1024;

/** Parses a JSON object body from a byte stream; resolves with the number of array elements seen (0 if the field is absent). */
export async function parseStreamedObject(source: AsyncIterable<Buffer>, options: StreamedObjectOptions, handler: StreamedObjectHandler): Promise<number> {
  const batchSize = options.batchSize ?? 5000;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  const scanner = new Scanner(options.arrayField, handler, options.maxElementBytes ?? 64 * 1024);
  let delivered = 0;
  const deliver = async (all: boolean): Promise<void> => {
    const pending = scanner.parsed;
    // Large elements go on as soon as they hold HELD_BYTES, not once a whole batch of them is here.
    const now = all || scanner.parsedBytes >= HELD_BYTES;
    let k = 0;
    while (pending.length - k >= batchSize || (now && k < pending.length)) {
      const batch = pending.slice(k, k + batchSize);
      k += batch.length;
      await handler.elements(batch, delivered);
      delivered += batch.length;
    }
    if (k > 0) scanner.parsed = pending.slice(k);
    if (scanner.parsed.length === 0) scanner.parsedBytes = 0;
  };

  const utf8 = new Utf8StreamCheck();
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    // Thrown inside for-await, this also stops (and for a Readable, destroys) the source.
    if (total > options.maxBytes) throw new HermodError('body_too_large', `request body exceeds ${options.maxBytes} bytes`);
    // The scanner sees only whole characters, so a bad byte is named as such rather than as bad JSON.
    for (const piece of utf8.push(chunk)) {
      let pos = 0;
      while (pos < piece.length) {
        pos = scanner.feed(piece, pos);
        // The rest of the array goes out before any field that follows it.
        if (scanner.arrayClosed) {
          scanner.arrayClosed = false;
          await deliver(true);
        }
      }
    }
    await deliver(false);
  }
  utf8.end();
  scanner.end();
  return scanner.count;
}

const QUOTE = 0x22,
  BACKSLASH = 0x5c,
  COMMA = 0x2c,
  COLON = 0x3a;
const OPEN_BRACE = 0x7b,
  CLOSE_BRACE = 0x7d,
  OPEN_BRACKET = 0x5b,
  CLOSE_BRACKET = 0x5d;
const BOM = [0xef, 0xbb, 0xbf];

// Where the scanner is in the top-level object.
const START = 0,
  KEY_OR_CLOSE = 1,
  KEY_NEXT = 2,
  KEY = 3,
  COLON_NEXT = 4,
  VALUE_NEXT = 5,
  VALUE = 6,
  ARRAY = 7,
  AFTER_VALUE = 8,
  DONE = 9,
  // A body that starts as JSON other than an object might: whether it is JSON at all shows only at its end.
  NOT_OBJECT = 10;
/** Most of such a body kept to tell which (a larger one is refused as not an object without reading on). */
const NOT_OBJECT_KEPT = 64 * 1024;
// What kind of value (or key) is being collected.
const SCALAR = 0,
  STRING = 1,
  CONTAINER = 2;

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function invalid(message: string, at: number): HermodError {
  return new HermodError('invalid_json', `request body is not valid JSON: ${message} (near byte ${at})`);
}

/** A value or element nested deeper than MAX_JSON_DEPTH: refused as it is scanned, before JSON.parse spends seconds on it. */
function tooDeep(where: string): HermodError {
  return new HermodError('invalid_json', `request body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays, in ${where}`);
}

/** A body that starts as JSON other than an object: valid JSON, perhaps, but not what the interface takes. */
function notAnObject(what: string): HermodError {
  return new HermodError('invalid_json', `request body must be a JSON object, not ${what}`);
}

function show(b: number): string {
  return b >= 0x20 && b < 0x7f ? `'${String.fromCharCode(b)}'` : `byte 0x${b.toString(16).padStart(2, '0')}`;
}

/**
 * A byte-level state machine over the top-level object. Keys and ordinary
 * values are collected as byte slices and handed to JSON.parse whole; the
 * streamed array is cut after its last complete element in each chunk and
 * parsed with one JSON.parse per chunk, the incomplete tail carried over.
 * Slices are decoded only at value boundaries, so UTF-8 characters split
 * across chunks are never decoded in halves.
 */
class Scanner {
  state = START;
  /** Absolute offset of the current chunk's first byte. */
  private offset = 0;
  private chunkLength = 0;
  private bomBytes = 0;
  /** A body that is no object (NOT_OBJECT): its bytes so far, where it began, and what its first byte says it is. */
  private notObject = { pieces: [] as Buffer[], bytes: 0, at: 0, first: 0, what: '' };
  private key = '';
  private arraySeen = false;
  // The key, value or array content being collected, and its bytes.
  private pieces: Buffer[] = [];
  private held = 0;
  private start = 0;
  private startOffset = 0;
  private kind = SCALAR;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Some of the array is already parsed, so an empty segment now means a stray comma. */
  private partParsed = false;
  /** Parsed elements not yet handed to the handler, and the bytes of JSON they came from (about). */
  parsed: unknown[] = [];
  parsedBytes = 0;
  count = 0;
  arrayClosed = false;

  constructor(
    private readonly arrayField: string,
    private readonly handler: StreamedObjectHandler,
    private readonly maxElementBytes: number,
  ) {}

  /** Keeps a piece of what is being collected, refusing an element or value that grows past its limit. */
  private hold(piece: Buffer): void {
    this.held += piece.length;
    if (this.held > this.maxElementBytes) throw this.tooLarge();
    this.pieces.push(piece);
  }

  private tooLarge(index = this.count): HermodError {
    const limit = `may be at most ${this.maxElementBytes} bytes of JSON`;
    if (this.state === ARRAY) return new HermodError('unprocessable', `${this.arrayField}[${index}]: a member ${limit}`);
    if (this.state === VALUE) return new HermodError('unprocessable', `${this.key}: a field ${limit}`);
    return new HermodError('unprocessable', `a field name ${limit}`);
  }

  /** Scans `c` from `i`; returns where it stopped, early only right after the streamed array closes. */
  feed(c: Buffer, i: number): number {
    if (i === 0) {
      this.offset += this.chunkLength;
      this.chunkLength = c.length;
    }
    const n = c.length;
    while (i < n) {
      const state = this.state;
      if (state === ARRAY) {
        i = this.scanArray(c, i);
        if (this.arrayClosed) return i;
        continue;
      }
      if (state === KEY || state === VALUE) {
        const end = this.scanValue(c, i);
        if (end < 0) {
          this.hold(Buffer.from(c.subarray(this.start)));
          this.start = 0;
          return n;
        }
        this.finishValue(c, end);
        i = end;
        continue;
      }
      if (state === NOT_OBJECT) {
        this.keepNotObject(c.subarray(i));
        return n;
      }
      const b = c[i]!;
      if (isSpace(b)) {
        i++;
        continue;
      }
      const at = this.offset + i;
      switch (state) {
        case START:
          if (at === this.bomBytes && at < 3 && b === BOM[at]) this.bomBytes++;
          else if (this.bomBytes > 0 && this.bomBytes < 3) throw invalid('incomplete byte-order mark', at);
          else if (b === OPEN_BRACE) this.state = KEY_OR_CLOSE;
          else {
            const what = b === OPEN_BRACKET ? 'an array' : b === QUOTE ? 'a string' : b === 0x2d || (b >= 0x30 && b <= 0x39) ? 'a number' : '';
            const literal = b === 0x6e ? 'null' : b === 0x74 ? 'true' : b === 0x66 ? 'false' : '';
            if (!what && !literal) throw invalid(`expected '{' but found ${show(b)}`, at);
            this.notObject = { pieces: [], bytes: 0, at, first: b, what: what || literal };
            this.state = NOT_OBJECT;
            this.keepNotObject(c.subarray(i));
            return n;
          }
          break;
        case KEY_OR_CLOSE:
        case KEY_NEXT:
          if (b === QUOTE) this.begin(KEY, STRING, i);
          else if (b === CLOSE_BRACE && state === KEY_OR_CLOSE) this.state = DONE;
          else throw invalid(`expected a field name but found ${show(b)}`, at);
          break;
        case COLON_NEXT:
          if (b !== COLON) throw invalid(`expected ':' after field "${this.key}" but found ${show(b)}`, at);
          this.state = VALUE_NEXT;
          break;
        case VALUE_NEXT:
          if (b === OPEN_BRACKET && this.key === this.arrayField) {
            this.begin(ARRAY, CONTAINER, i + 1);
            // Inside the array, depth counts within one element.
            this.depth = 0;
            this.partParsed = false;
          } else if (b === QUOTE) this.begin(VALUE, STRING, i);
          else if (b === OPEN_BRACE || b === OPEN_BRACKET) this.begin(VALUE, CONTAINER, i);
          else if (b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET || b === COLON) {
            throw invalid(`expected a value for field "${this.key}" but found ${show(b)}`, at);
          } else this.begin(VALUE, SCALAR, i);
          break;
        case AFTER_VALUE:
          if (b === COMMA) this.state = KEY_NEXT;
          else if (b === CLOSE_BRACE) this.state = DONE;
          else throw invalid(`expected ',' or '}' after field "${this.key}" but found ${show(b)}`, at);
          break;
        default:
          throw invalid(`unexpected ${show(b)} after the end of the JSON object`, at);
      }
      i++;
    }
    // A key or value whose first byte ended the chunk.
    if ((this.state === KEY || this.state === VALUE) && this.start < n) {
      this.hold(Buffer.from(c.subarray(this.start)));
      this.start = 0;
    }
    return n;
  }

  /** Keeps what a body that is no object holds, up to NOT_OBJECT_KEPT: past that, it is refused for what it began as. */
  private keepNotObject(piece: Buffer): void {
    const kept = this.notObject;
    kept.bytes += piece.length;
    if (kept.bytes > NOT_OBJECT_KEPT) {
      // No null, true or false takes 64 KiB: one that begins so is no JSON at all.
      if (kept.what === 'null' || kept.what === 'true' || kept.what === 'false') throw invalid(`expected '{' but found ${show(kept.first)}`, kept.at);
      throw notAnObject(kept.what);
    }
    kept.pieces.push(Buffer.from(piece));
  }

  end(): void {
    if (this.state === NOT_OBJECT) {
      const kept = this.notObject;
      let value: unknown;
      try {
        value = JSON.parse(Buffer.concat(kept.pieces).toString('utf8'));
      } catch {
        // `nonsense`, `12abc`, `[1`: no JSON at all, not JSON of another kind.
        throw invalid(`expected '{' but found ${show(kept.first)}`, kept.at);
      }
      throw notAnObject(value === null ? 'null' : value === true ? 'true' : value === false ? 'false' : kept.what);
    }
    if (this.state === START) throw new HermodError('invalid_json', 'request body is empty; a JSON object is required');
    if (this.state !== DONE) throw invalid('unexpected end of input', this.offset + this.chunkLength);
  }

  private begin(state: number, kind: number, start: number): void {
    this.state = state;
    this.kind = kind;
    this.start = start;
    this.startOffset = this.offset + start;
    this.pieces = [];
    this.held = 0;
    this.depth = kind === CONTAINER ? 1 : 0;
    this.inString = kind === STRING;
    this.escaped = false;
  }

  /** Index just past the key or value if it ends in `c`, else -1; begin() has already consumed its opening byte. */
  private scanValue(c: Buffer, i: number): number {
    const kind = this.kind;
    let depth = this.depth,
      inString = this.inString,
      escaped = this.escaped;
    let end = -1;
    for (const n = c.length; i < n; i++) {
      const b = c[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) {
          inString = false;
          if (depth === 0) {
            end = i + 1;
            break;
          }
        }
      } else if (kind === SCALAR) {
        if (isSpace(b) || b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET) {
          end = i;
          break;
        }
      } else if (b === QUOTE) inString = true;
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        if (++depth > MAX_JSON_DEPTH) throw tooDeep(this.key);
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        if (--depth === 0) {
          end = i + 1;
          break;
        }
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return end;
  }

  private finishValue(c: Buffer, end: number): void {
    // Its last piece counts too: a field is refused past the limit however its bytes came in chunks.
    if (this.held + end - this.start > this.maxElementBytes) throw this.tooLarge();
    const text = this.collect(c, end).toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw this.state === KEY ? invalid('malformed field name', this.startOffset) : invalid(`malformed value for field "${this.key}"`, this.startOffset);
    }
    if (mayHaveLoneSurrogate(text)) checkNoLoneSurrogates(value, this.state === VALUE ? this.key : '(field name)');
    if (this.state === VALUE) {
      this.handler.field(this.key, value);
      this.state = AFTER_VALUE;
      return;
    }
    this.key = value as string;
    if (this.key === this.arrayField) {
      if (this.arraySeen) throw invalid(`field ${this.arrayField} appears twice`, this.startOffset);
      this.arraySeen = true;
    }
    this.state = COLON_NEXT;
  }

  private collect(c: Buffer, end: number): Buffer {
    const tail = c.subarray(this.start, end);
    this.held = 0;
    if (this.pieces.length === 0) return tail;
    this.pieces.push(tail);
    const all = Buffer.concat(this.pieces);
    this.pieces = [];
    return all;
  }

  /** Scans array content from `i`; parses every element completed in `c`. */
  private scanArray(c: Buffer, i: number): number {
    this.start = i;
    let depth = this.depth,
      inString = this.inString,
      escaped = this.escaped;
    let lastComma = -1,
      close = -1;
    // Each element's bytes, with what an earlier chunk held of the first: one over the limit is refused, however it came.
    const max = this.maxElementBytes;
    let elementStart = i,
      carried = this.held,
      index = this.count;
    for (const n = c.length; i < n; i++) {
      const b = c[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) inString = false;
      } else if (b === QUOTE) inString = true;
      else if (b === COMMA) {
        if (depth === 0) {
          if (carried + i - elementStart > max) throw this.tooLarge(index);
          lastComma = i;
          elementStart = i + 1;
          carried = 0;
          index++;
        }
      } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        if (++depth > MAX_JSON_DEPTH) throw tooDeep(`${this.arrayField}[${index}]`);
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        if (depth > 0) depth--;
        else if (b === CLOSE_BRACKET) {
          if (carried + i - elementStart > max) throw this.tooLarge(index);
          close = i;
          break;
        } else throw invalid(`unexpected '}' in ${this.arrayField}`, this.offset + i);
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    if (close >= 0) {
      this.parseElements(this.collect(c, close), true);
      this.state = AFTER_VALUE;
      this.arrayClosed = true;
      return close + 1;
    }
    if (lastComma >= 0) {
      this.parseElements(this.collect(c, lastComma), false);
      this.start = lastComma + 1;
      this.startOffset = this.offset + lastComma + 1;
    }
    if (this.start < c.length) this.hold(Buffer.from(c.subarray(this.start)));
    return c.length;
  }

  private parseElements(content: Buffer, last: boolean): void {
    const text = content.toString('utf8');
    let elements: unknown[];
    try {
      elements = JSON.parse(`[${text}]`) as unknown[];
    } catch {
      throw this.locate(text);
    }
    if (mayHaveLoneSurrogate(text))
      elements.forEach((e, i) => {
        checkNoLoneSurrogates(e, `${this.arrayField}[${this.count + i}]`);
      });
    if (elements.length === 0 && (this.partParsed || !last)) {
      throw invalid(`missing element ${this.arrayField}[${this.count}]`, this.startOffset + content.length);
    }
    this.partParsed = true;
    this.count += elements.length;
    this.parsedBytes += content.length;
    if (this.parsed.length === 0) this.parsed = elements;
    else for (const e of elements) this.parsed.push(e);
  }

  /** Only on failure: finds the first malformed element, for a precise message. */
  private locate(text: string): HermodError {
    let depth = 0,
      inString = false,
      escaped = false,
      from = 0,
      index = this.count;
    for (let i = 0; i <= text.length; i++) {
      const ch = text[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (ch === '\\') escaped = true;
        else if (ch === '"') inString = false;
      } else if (ch === '"') inString = true;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') depth--;
      else if ((ch === ',' && depth === 0) || i === text.length) {
        const element = text.slice(from, i);
        try {
          JSON.parse(element);
        } catch {
          const at = this.startOffset + Buffer.byteLength(text.slice(0, from));
          const what = element.trim() === '' ? 'missing element' : 'malformed element';
          return invalid(`${what} ${this.arrayField}[${index}]`, at);
        }
        from = i + 1;
        index++;
      }
    }
    return invalid(`malformed elements in ${this.arrayField}`, this.startOffset);
  }
}
