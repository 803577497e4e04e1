import { isUtf8 } from 'node:buffer';
import type { MessageRecord, StatusEvent } from '../ports/message-history';
import { JsonRowWriter } from './json-row-writer';
import { writeEventRow, writeMessageRow } from './row-bytes';
import { eventRow, messageRow } from './rows';

/**
 * The journal's line format. A batch is one write of lines `E<row>` (events
 * first) and `M<row>`, each row the JSONEachRow line the history table takes
 * (rows.ts), so a flush sends rows as they are. The write is a writev of the
 * batch's pieces (libuv splits one of more than 1,024; a torn tail is cut on
 * replay as ever). Lines of the earlier form,
 * `{"m":record}` / `{"e":event}`, are still read.
 *
 * Reading works on bytes: the checkpoint is a byte offset, and a newline byte
 * never occurs inside a multi-byte UTF-8 character, so cutting at newline
 * bytes cannot split one.
 */

const NEWLINE = 0x0a;
const KIND_EVENT = 0x45; // 'E'
const KIND_MESSAGE = 0x4d; // 'M'
const LEGACY = 0x7b; // '{'

/**
 * Rows a piece holds at most. A piece's bytes (tens of kilobytes) come from
 * malloc's heap, which hands the same memory out again; a whole batch in one
 * Buffer (a megabyte under a campaign) was above malloc's mmap threshold
 * (128 KB, lib/malloc-env.ts), so every batch mapped fresh pages, faulted each
 * one in and unmapped them again: about 0.9 µs a row against 0.3 µs in pieces.
 */
const ROWS_PER_PIECE = 64;

/** A batch encoded once, in pieces of at most ROWS_PER_PIECE rows, to be written and kept in order. */
export interface EncodedBatch {
  /** The batch in the journal's line format: events first, then messages. */
  journal: Buffer[];
  /** Its rows as the engine takes them (JSONEachRow: each row and a newline), in UTF-8. */
  messages: Buffer[];
  events: Buffer[];
}

/**
 * The journal's lines of a batch and the engine's rows of it, from one UTF-8
 * encoding: each line is its row with the kind's byte in front, copied. The
 * journal keeps the engine's rows until the flush: bytes outside V8's heap,
 * where its collector never copies them.
 */
export function encodeBatch(messageRows: readonly string[], eventRows: readonly string[]): EncodedBatch {
  const batch: EncodedBatch = { journal: [], messages: [], events: [] };
  encodePieces(eventRows, KIND_EVENT, batch.events, batch.journal);
  encodePieces(messageRows, KIND_MESSAGE, batch.messages, batch.journal);
  return batch;
}

function encodePieces(rows: readonly string[], kind: number, engine: Buffer[], journal: Buffer[]): void {
  for (let first = 0; first < rows.length; first += ROWS_PER_PIECE) {
    const end = Math.min(rows.length, first + ROWS_PER_PIECE);
    let text = '';
    for (let r = first; r < end; r++) text += rows[r] + '\n';
    const bytes = Buffer.from(text, 'utf8');
    // A row is JSON, which escapes newlines: each newline byte ends one.
    const lines = Buffer.allocUnsafe(bytes.length + (end - first));
    let at = 0;
    for (let from = 0; from < bytes.length; ) {
      const next = bytes.indexOf(NEWLINE, from) + 1;
      lines[at++] = kind;
      at += bytes.copy(lines, at, from, next);
      from = next;
    }
    engine.push(bytes);
    journal.push(lines);
  }
}

/**
 * The same batch as `encodeBatch` of the records' rows, written from the
 * records: no row object, no JSON string, no text to encode afterwards.
 */
export function encodeRecords(messages: readonly MessageRecord[], events: readonly StatusEvent[]): EncodedBatch {
  const batch: EncodedBatch = { journal: [], messages: [], events: [] };
  writePieces(events, writeEventRow, KIND_EVENT, batch.events, batch.journal);
  writePieces(messages, writeMessageRow, KIND_MESSAGE, batch.messages, batch.journal);
  return batch;
}

const writer = new JsonRowWriter();
const rowStarts = new Int32Array(ROWS_PER_PIECE + 1);

function writePieces<T>(items: readonly T[], write: (w: JsonRowWriter, item: T) => void, kind: number, engine: Buffer[], journal: Buffer[]): void {
  for (let first = 0; first < items.length; first += ROWS_PER_PIECE) {
    const count = Math.min(items.length - first, ROWS_PER_PIECE);
    writer.reset();
    for (let r = 0; r < count; r++) {
      rowStarts[r] = writer.length;
      write(writer, items[first + r]!);
      writer.byte(NEWLINE);
    }
    rowStarts[count] = writer.length;
    const lines = Buffer.allocUnsafe(writer.length + count);
    let at = 0;
    for (let r = 0; r < count; r++) {
      lines[at++] = kind;
      at += writer.copyInto(lines, at, rowStarts[r]!, rowStarts[r + 1]!);
    }
    engine.push(writer.copy());
    journal.push(lines);
  }
}

/** What is left of `pieces` after their first `skip` bytes (a write that took less than asked). */
export function piecesAfter(pieces: readonly Buffer[], skip: number): Buffer[] {
  const rest: Buffer[] = [];
  for (const piece of pieces) {
    if (skip >= piece.length) skip -= piece.length;
    else {
      rest.push(skip > 0 ? piece.subarray(skip) : piece);
      skip = 0;
    }
  }
  return rest;
}

type DamageReason = 'not_utf8' | 'not_json' | 'unknown_kind';

export interface DamagedLine {
  /** Byte offset of the line in its segment. */
  offset: number;
  reason: DamageReason;
  bytes: Buffer;
}

interface JournalLines {
  messages: string[];
  events: string[];
  damaged: DamagedLine[];
  /** Bytes after the last newline: a batch the process died writing, never acknowledged. */
  tornBytes: number;
}

interface LegacyEntry {
  m?: MessageRecord;
  e?: StatusEvent;
}

/** The rows of a segment from byte offset `from` on. */
export function readJournalLines(segment: Buffer, from: number): JournalLines {
  const out: JournalLines = { messages: [], events: [], damaged: [], tornBytes: 0 };
  let start = Math.min(Math.max(from, 0), segment.length);
  while (start < segment.length) {
    const end = segment.indexOf(NEWLINE, start);
    if (end < 0) {
      out.tornBytes = segment.length - start;
      break;
    }
    if (end > start) readLine(segment.subarray(start, end), start, out);
    start = end + 1;
  }
  return out;
}

function readLine(line: Buffer, offset: number, out: JournalLines): void {
  const damaged = (reason: DamageReason): void => void out.damaged.push({ offset, reason, bytes: line });
  if (!isUtf8(line)) return damaged('not_utf8');
  const kind = line[0];
  if (kind === KIND_EVENT || kind === KIND_MESSAGE) {
    const row = line.toString('utf8', 1);
    // The engine would refuse the whole batch for one bad row: check each here, where it can be set aside alone.
    if (!isJsonObject(row)) return damaged('not_json');
    (kind === KIND_EVENT ? out.events : out.messages).push(row);
    return;
  }
  if (kind !== LEGACY) return damaged('unknown_kind');
  let entry: LegacyEntry;
  try {
    entry = JSON.parse(line.toString('utf8')) as LegacyEntry;
  } catch {
    return damaged('not_json');
  }
  if (!entry || typeof entry !== 'object' || (!entry.m && !entry.e)) return damaged('unknown_kind');
  let rows: { event?: string; message?: string };
  try {
    rows = { event: entry.e && JSON.stringify(eventRow(entry.e)), message: entry.m && JSON.stringify(messageRow(entry.m)) };
  } catch {
    return damaged('not_json');
  }
  if (rows.event) out.events.push(rows.event);
  if (rows.message) out.messages.push(rows.message);
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
