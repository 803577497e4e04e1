import { isUtf8 } from 'node:buffer';
import type { MessageRecord, StatusEvent } from '../ports/message-history';
import { eventRow, messageRow } from './rows';

/**
 * The journal's line format. A batch is one write of lines `E<row>` (events
 * first) and `M<row>`, each row the JSONEachRow line the history table takes
 * (rows.ts), so a flush sends rows as they are. Lines of the earlier form,
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

export function encodeJournalBatch(messageRows: readonly string[], eventRows: readonly string[]): Buffer {
  let text = '';
  for (const r of eventRows) text += 'E' + r + '\n';
  for (const r of messageRows) text += 'M' + r + '\n';
  return Buffer.from(text, 'utf8');
}

/**
 * Rows as the engine takes them (JSONEachRow: each row and a newline), in
 * UTF-8. The journal keeps a batch's rows in this form until its flush: bytes
 * outside V8's heap, where its collector never copies them, where strings
 * kept for the flush were copied twice on their way to the old generation.
 */
export function encodeRows(rows: readonly string[]): Buffer {
  if (rows.length === 0) return EMPTY;
  let text = '';
  for (const r of rows) text += r + '\n';
  return Buffer.from(text, 'utf8');
}

const EMPTY = Buffer.alloc(0);

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
