import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../../lib/log';
import type { EncodedHistory, EncodedRows } from './encoded-history';

/**
 * What the journal tests stand in for the engine and the logger: the journal
 * only ever inserts encoded rows into its inner history on replay and flush,
 * so a recording object is the whole of what it needs; any other call is a
 * mistake in the test and throws.
 */
interface RecordingHistory {
  history: EncodedHistory;
  /** Message and event rows, in the order they were inserted. */
  messages: string[];
  events: string[];
  inserts: number;
  /** Runs inside insertEncoded, after the rows are recorded: where a test crashes the process "between insert and checkpoint". */
  onInsert?: () => void;
}

/** The rows as text, whichever form the journal hands over (bytes end with a newline, text does not). */
const linesOf = (rows: EncodedRows): string[] => {
  const text = String(rows).replace(/\n$/, '');
  return text === '' ? [] : text.split('\n');
};

export function recordingHistory(): RecordingHistory {
  const rec: RecordingHistory = { history: undefined as unknown as EncodedHistory, messages: [], events: [], inserts: 0 };
  const known: Record<string, unknown> = {
    campaigns: {},
    im: {},
    async insertEncoded(messageRows: EncodedRows, eventRows: EncodedRows) {
      rec.inserts++;
      rec.messages.push(...linesOf(messageRows));
      rec.events.push(...linesOf(eventRows));
      rec.onInsert?.();
    },
    async close() {},
  };
  rec.history = new Proxy(known, {
    get: (target, key) =>
      key in target
        ? target[key as string]
        : () => {
            throw new Error(`the journal was not expected to call ${String(key)} on its inner history`);
          },
  }) as unknown as EncodedHistory;
  return rec;
}

interface LogEntry {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

export function recordingLogger(entries: LogEntry[] = []): Logger & { entries: LogEntry[] } {
  const make = (base: Record<string, unknown>): Logger => ({
    debug: (msg, f) => entries.push({ level: 'debug', msg, fields: { ...base, ...f } }),
    info: (msg, f) => entries.push({ level: 'info', msg, fields: { ...base, ...f } }),
    warn: (msg, f) => entries.push({ level: 'warn', msg, fields: { ...base, ...f } }),
    error: (msg, f) => entries.push({ level: 'error', msg, fields: { ...base, ...f } }),
    child: (fields) => make({ ...base, ...fields }),
  });
  return Object.assign(make({}), { entries });
}

/**
 * What kill -9 leaves behind at this instant: a copy of the journal directory.
 * The journal writes with one synchronous write per batch and renames its
 * checkpoint into place, so a synchronous copy sees exactly what a process
 * started after the crash would see.
 */
export function crashImage(dir: string): string {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-crash-'));
  fs.cpSync(dir, copy, { recursive: true });
  return copy;
}

/** The bytes the journal writes for one batch: events first, then messages, one line each. */
export function journalBatch(messages: readonly string[], events: readonly string[]): Buffer {
  let text = '';
  for (const r of events) text += 'E' + r + '\n';
  for (const r of messages) text += 'M' + r + '\n';
  return Buffer.from(text, 'utf8');
}

/** The journal's segment files, in order. */
export function segmentFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^journal-\d{10}\.ndjson$/.test(f))
    .sort();
}
