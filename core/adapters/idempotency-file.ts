import fs from 'node:fs';
import path from 'node:path';
import { appendWhole } from '../../lib/append-whole';
import type { IdempotencyRecord } from '../ports/state';

export interface KeptAnswer {
  key: string;
  record: Required<IdempotencyRecord>;
  /** Epoch ms after which the key is free again. */
  expires: number;
}

/** The answers of Idempotency-Keys of an in-process hot state, on disk, so a client's retry after a restart still gets the first answer. */
export interface IdempotencyFile {
  /** Appends one answer, on disk (page cache; with fsync, the device) when it returns. */
  keep(answer: KeptAnswer): void;
  /** Answers kept since the file was last rewritten, live or not. */
  readonly lines: number;
  /** Replaces the file with `live` only (an atomic rename: a crash leaves one whole file). */
  rewrite(live: Iterable<KeptAnswer>): void;
  close(): void;
}

const NEWLINE = 0x0a;

/**
 * Opens `file`, returning what it holds that has not expired at `now`, oldest
 * first, and rewrites it with only those (a torn last line, from a crash in
 * the middle of an append, is dropped with the expired ones). A line is one
 * JSON object; a line that does not read as one is skipped, never fatal.
 */
export function openIdempotencyFile(file: string, now: number, fsync: boolean): { file: IdempotencyFile; kept: KeptAnswer[] } {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const kept: KeptAnswer[] = [];
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
      if (end < 0) break; // a torn last line: its answer was never acknowledged as kept
      const answer = parseLine(existing.toString('utf8', from, end));
      if (answer && answer.expires > now) kept.push(answer);
      from = end + 1;
    }
  }

  let fd = -1;
  let lines = 0;
  /** The file's length after its last whole line: a failed append is cut back to it. */
  let bytes = 0;
  const tmp = `${file}.tmp`;
  const idempotencyFile: IdempotencyFile = {
    keep(answer) {
      const buf = Buffer.from(`${lineOf(answer)}\n`, 'utf8');
      appendWhole(fd, buf, bytes, fsync);
      bytes += buf.length;
      lines++;
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
        for (const answer of live) {
          piece += `${lineOf(answer)}\n`;
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
  idempotencyFile.rewrite(kept);
  return { file: idempotencyFile, kept };
}

/** A rename is durable once its directory is synced. */
function syncDirectory(dir: string): void {
  const dfd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(dfd);
  } finally {
    fs.closeSync(dfd);
  }
}

const lineOf = (a: KeptAnswer): string => JSON.stringify({ k: a.key, f: a.record.fingerprint, r: a.record.response, e: a.expires });

function parseLine(line: string): KeptAnswer | undefined {
  try {
    const v = JSON.parse(line) as { k?: unknown; f?: unknown; r?: unknown; e?: unknown };
    if (typeof v.k !== 'string' || typeof v.f !== 'string' || typeof v.r !== 'string' || typeof v.e !== 'number') return undefined;
    return { key: v.k, record: { fingerprint: v.f, response: v.r }, expires: v.e };
  } catch {
    return undefined;
  }
}
