import fs from 'node:fs';
import { appendWhole } from '../../lib/append-whole';
import { replayOutbox, type Replayed } from './callback-outbox-format';

/** The outbox's journal file: appends of whole lines, and an atomic swap for compaction. */
export interface OutboxJournal {
  /** Appends all of `buf`, or on failure cuts the file back so no torn line is left for later lines to join. */
  append(buf: Buffer): void;
  /** Replaces the file with `buf` (rename is atomic: a crash leaves one whole file). */
  replace(buf: Buffer): void;
  readonly bytes: number;
  close(): void;
}

/**
 * Opens the journal at `file` and replays what it holds (undefined when there
 * was none). A torn last line is cut off, so later appends start on a line of
 * their own; the rest is kept as it is (rewriting it would cost a restart time).
 */
export function openOutboxJournal(file: string, fsync: boolean): { journal: OutboxJournal; replayed: Replayed | undefined } {
  const tmp = `${file}.tmp`;
  // A swap that a crash interrupted: the old file is still whole.
  fs.rmSync(tmp, { force: true });
  let fd = -1;
  let bytes = 0;
  let closed = false;

  const journal: OutboxJournal = {
    append(buf) {
      if (closed) throw new Error('callback outbox is closed');
      appendWhole(fd, buf, bytes, fsync);
      bytes += buf.length;
    },
    replace(buf) {
      const out = fs.openSync(tmp, 'w');
      try {
        fs.writeFileSync(out, buf);
        if (fsync) fs.fdatasyncSync(out);
      } finally {
        fs.closeSync(out);
      }
      fs.renameSync(tmp, file);
      if (fd >= 0) fs.closeSync(fd);
      fd = fs.openSync(file, 'a');
      bytes = buf.length;
    },
    get bytes() {
      return bytes;
    },
    close() {
      if (closed) return;
      closed = true;
      fs.closeSync(fd);
    },
  };

  let existing: Buffer | undefined;
  try {
    existing = fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (!existing) {
    journal.replace(Buffer.alloc(0));
    return { journal, replayed: undefined };
  }
  const replayed = replayOutbox(existing);
  fs.truncateSync(file, replayed.whole);
  fd = fs.openSync(file, 'a');
  bytes = replayed.whole;
  return { journal, replayed };
}
