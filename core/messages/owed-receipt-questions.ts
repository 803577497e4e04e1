import fs from 'node:fs';
import path from 'node:path';
import { syncDirectory } from '../../lib/json-lines-file';

/** Questions about delivery receipts the carriers are owed, on disk until every one was asked. */
export interface OwedReceiptQuestions {
  /** Messages accepted before then (ms) still waiting for a receipt are to be asked about; undefined: none are. */
  readonly before: number | undefined;
  /** On disk when it returns, so a crash from here on leaves it to the next start. Only ever raises what is owed. */
  owe(acceptedBefore: number): void;
  /** Every message accepted before `acceptedBefore` was asked about: owed no more, unless a later loss owes more. */
  paid(acceptedBefore: number): void;
}

/**
 * A Redis bus back without its data took the delivery receipts its streams
 * held; the carriers, told they were safe, never send them again, so core asks
 * them (receipt-queries.ts). Only the moment of the loss says which messages
 * to ask about, and a Redis loss marker says it only once: a core killed
 * before it had asked (an operator's trial) left them `submitted` for good.
 * This note in the data directory outlives it: the next start asks.
 */
export function openOwedReceiptQuestions(file: string, fsync: boolean): OwedReceiptQuestions {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let before = read(file);
  const write = (value: number | undefined): void => {
    if (value === undefined) fs.rmSync(file, { force: true });
    else {
      const tmp = `${file}.tmp`;
      const fd = fs.openSync(tmp, 'w');
      try {
        fs.writeSync(fd, JSON.stringify({ acceptedBefore: value }));
        if (fsync) fs.fdatasyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, file);
    }
    if (fsync) syncDirectory(path.dirname(file));
    before = value;
  };
  return {
    get before() {
      return before;
    },
    owe(acceptedBefore) {
      if (before === undefined || acceptedBefore > before) write(acceptedBefore);
    },
    paid(acceptedBefore) {
      if (before !== undefined && before <= acceptedBefore) write(undefined);
    },
  };
}

/**
 * What the file owes. One that does not say (written whole by a rename, so only a hand could have changed it)
 * still owes something: every message waiting for a receipt is asked about, more than was owed but none missed.
 */
function read(file: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const value = (JSON.parse(text) as { acceptedBefore?: unknown } | null)?.acceptedBefore;
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  } catch {
    // Said below.
  }
  return Date.now();
}
