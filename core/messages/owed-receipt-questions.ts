import fs from 'node:fs';
import path from 'node:path';
import { syncDirectory } from '../../lib/json-lines-file';
import type { Logger } from '../../lib/log';

/** Questions about delivery receipts the carriers are owed, on disk until every one was asked. */
export interface OwedReceiptQuestions {
  /** Messages accepted before then (ms) still waiting for a receipt are to be asked about; undefined: none are. */
  readonly before: number | undefined;
  /**
   * On disk when it returns, so a crash from here on leaves it to the next start. Only ever raises what is owed. A
   * disk that refuses it is logged, never thrown: it is owed in memory, asked all the same, and only a crash before
   * then loses it.
   */
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
export function openOwedReceiptQuestions(file: string, fsync: boolean, log: Logger): OwedReceiptQuestions {
  let before = read(file, log);
  const write = (value: number | undefined): void => {
    before = value;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
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
    } catch (err) {
      log.error(
        value === undefined
          ? 'could not note in the data directory that no questions about receipts are owed; the next start may ask again'
          : 'could not note in the data directory that questions about receipts are owed; they are asked now, but a crash before then loses them',
        { err, file },
      );
    }
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
 * What the file owes. One that does not say (written whole by a rename, so only a hand could have changed it), or
 * cannot be read, still owes something: every message waiting for a receipt is asked about, more than was owed but
 * none missed.
 */
function read(file: string, log: Logger): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    log.error('could not read which questions about receipts are owed; asking about every message waiting for one', { err, file });
    return Date.now();
  }
  try {
    const value = (JSON.parse(text) as { acceptedBefore?: unknown } | null)?.acceptedBefore;
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  } catch {
    // Said below.
  }
  return Date.now();
}
