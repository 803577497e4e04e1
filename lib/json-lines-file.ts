import fs from 'node:fs';
import path from 'node:path';
import { appendWhole } from './append-whole';

/** Items kept one JSON line each in a file, appended as they come and rewritten with the live ones only. */
export interface JsonLinesFile<T> {
  /** Appends one item, on disk (page cache; with fsync, the device) when it returns. */
  keep(item: T): void;
  /** Appends several items, one line each, in one write (a turn's worth at once, not a write an item). */
  keepAll(items: readonly T[]): void;
  /** Items kept since the file was last rewritten, live or not. */
  readonly lines: number;
  /** Replaces the file with `live` only (an atomic rename: a crash leaves one whole file). */
  rewrite(live: Iterable<T>): void;
  close(): void;
}

const NEWLINE = 0x0a;

/**
 * Opens `file`, returning the items it holds that `read` takes (undefined:
 * dropped, e.g. expired), oldest first, and rewrites it with only those (a torn
 * last line, from a crash in the middle of an append, is dropped too). A line
 * is one JSON value; a line that does not parse is skipped, never fatal.
 */
export function openJsonLinesFile<T>(
  file: string,
  fsync: boolean,
  read: (value: unknown) => T | undefined,
  write: (item: T) => unknown,
): { file: JsonLinesFile<T>; kept: T[] } {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const kept: T[] = [];
  let existing: Buffer | undefined;
  try {
    existing = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (existing) {
    // Cut at newline bytes, which never occur inside a multi-byte UTF-8 character.
    for (let from = 0; from < existing.length; ) {
      const end = existing.indexOf(NEWLINE, from);
      if (end < 0) break; // a torn last line: its item was never acknowledged as kept
      const item = parseLine(existing.toString('utf8', from, end), read);
      if (item !== undefined) kept.push(item);
      from = end + 1;
    }
  }

  let fd = -1;
  let lines = 0;
  /** The file's length after its last whole line: a failed append is cut back to it. */
  let bytes = 0;
  const tmp = `${file}.tmp`;
  const lineOf = (item: T): string => JSON.stringify(write(item));
  const linesFile: JsonLinesFile<T> = {
    keep(item) {
      linesFile.keepAll([item]);
    },
    keepAll(items) {
      if (items.length === 0) return;
      let text = '';
      for (const item of items) text += `${lineOf(item)}\n`;
      const buf = Buffer.from(text, 'utf8');
      appendWhole(fd, buf, bytes, fsync);
      bytes += buf.length;
      lines += items.length;
    },
    get lines() {
      return lines;
    },
    rewrite(live) {
      let count = 0;
      let size = 0;
      const out = fs.openSync(tmp, 'w');
      try {
        // In pieces: a day of answers may be more than one string can hold.
        let piece = '';
        const flush = (): void => {
          const buf = Buffer.from(piece, 'utf8');
          for (let at = 0; at < buf.length; ) at += fs.writeSync(out, buf, at, buf.length - at);
          size += buf.length;
          piece = '';
        };
        for (const item of live) {
          piece += `${lineOf(item)}\n`;
          count++;
          if (piece.length >= 1 << 20) flush();
        }
        flush();
        if (fsync) fs.fdatasyncSync(out);
      } finally {
        fs.closeSync(out);
      }
      // Opened before the old one is closed: a failure leaves this file as it was, still appended to.
      const next = fs.openSync(tmp, 'a');
      try {
        fs.renameSync(tmp, file);
        if (fsync) syncDirectory(path.dirname(file));
      } catch (err) {
        fs.closeSync(next);
        throw err;
      }
      if (fd >= 0) fs.closeSync(fd);
      fd = next;
      lines = count;
      bytes = size;
    },
    close() {
      if (fd >= 0) fs.closeSync(fd);
      fd = -1;
    },
  };
  linesFile.rewrite(kept);
  return { file: linesFile, kept };
}

/** A rename is durable once its directory is synced. */
export function syncDirectory(dir: string): void {
  const dfd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dfd);
  } finally {
    fs.closeSync(dfd);
  }
}

function parseLine<T>(line: string, read: (value: unknown) => T | undefined): T | undefined {
  try {
    return read(JSON.parse(line));
  } catch {
    return undefined;
  }
}
