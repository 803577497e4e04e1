import fs from 'node:fs';
import path from 'node:path';
import type { ReceiptState } from '../carriers/smpp/delivery-receipt';

/** A delivery receipt the simulator owes an ESME until a deliver_sm_resp acknowledges it. */
export interface OwedReceipt {
  systemId: string;
  carrierMessageId: string;
  state: ReceiptState;
  errorCode: number;
  submitDate: number;
  /** Epoch ms when it may first be sent. */
  dueAt: number;
  /** Addresses of the original submit_sm (the receipt goes the other way). */
  sourceAddr: string;
  sourceTon: number;
  sourceNpi: number;
  destinationAddr: string;
  destTon: number;
  destNpi: number;
  /** The submitted text (any script; it is JSON in UTF-8 on disk). */
  text: string;
}

/** One line of the log: a receipt now owed, or one acknowledged. */
type Entry = { owe: OwedReceipt } | { ack: string };

const NEWLINE = 0x0a;

/**
 * The owed receipts a log's bytes describe, in the order they were first owed.
 * Lines are cut at the newline byte before any decoding (UTF-8 never has 0x0a
 * inside a multi-byte character, and JSON escapes a newline in a string), so
 * texts in any script come back whole; an unterminated last line is what a
 * crash tore mid-write and is ignored, as is any line that does not parse.
 */
export function replayReceiptLog(bytes: Buffer): Map<string, OwedReceipt> {
  const owed = new Map<string, OwedReceipt>();
  let start = 0;
  for (;;) {
    const end = bytes.indexOf(NEWLINE, start);
    if (end < 0) break;
    const line = bytes.subarray(start, end);
    start = end + 1;
    let entry: Entry;
    try {
      entry = JSON.parse(line.toString('utf8')) as Entry;
    } catch {
      continue;
    }
    if ('owe' in entry && entry.owe && typeof entry.owe.carrierMessageId === 'string') owed.set(entry.owe.carrierMessageId, entry.owe);
    else if ('ack' in entry && typeof entry.ack === 'string') owed.delete(entry.ack);
  }
  return owed;
}

function receiptOnly(r: OwedReceipt): OwedReceipt {
  return {
    systemId: r.systemId,
    carrierMessageId: r.carrierMessageId,
    state: r.state,
    errorCode: r.errorCode,
    submitDate: r.submitDate,
    dueAt: r.dueAt,
    sourceAddr: r.sourceAddr,
    sourceTon: r.sourceTon,
    sourceNpi: r.sourceNpi,
    destinationAddr: r.destinationAddr,
    destTon: r.destTon,
    destNpi: r.destNpi,
    text: r.text,
  };
}

function encode(entry: Entry): Buffer {
  return Buffer.from(JSON.stringify(entry) + '\n', 'utf8');
}

/**
 * Store and forward for the simulator: an append-only log of receipts owed
 * and acknowledged, in its data directory. Appends made in one turn of the
 * event loop go out in one write(2) on the next tick, before any
 * submit_sm_resp of that turn (the SMPP connection flushes on setImmediate),
 * so a receipt is on disk before its submit is answered, as an SMSC commits
 * before it acknowledges; a kill -9 loses at most the line being written.
 * Opening replays the log and compacts it to the receipts still owed; the log
 * is compacted again whenever acknowledged lines outnumber owed ones by far.
 */
export class ReceiptStore {
  private fd: number | undefined;
  private lines = 0;
  private pending: Buffer[] = [];

  private constructor(
    private readonly file: string,
    /** What is owed now, oldest first. */
    readonly owed: Map<string, OwedReceipt>,
    private readonly compactAfter: number,
  ) {
    this.compact();
  }

  /** Opens (creating its directory) and replays the log at `file`. */
  static open(file: string, options: { compactAfter?: number } = {}): ReceiptStore {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      bytes = Buffer.alloc(0);
    }
    return new ReceiptStore(file, replayReceiptLog(bytes), options.compactAfter ?? 4096);
  }

  get size(): number {
    return this.owed.size;
  }

  /** Records `receipt` as owed; only its own fields are kept (a dispatcher's order also carries its live session). */
  owe(receipt: OwedReceipt): void {
    if (this.fd === undefined || this.owed.has(receipt.carrierMessageId)) return;
    const owed = receiptOnly(receipt);
    this.owed.set(owed.carrierMessageId, owed);
    this.append(encode({ owe: owed }));
  }

  /** The ESME acknowledged it: it is never sent again. */
  ack(carrierMessageId: string): void {
    if (this.fd === undefined || !this.owed.delete(carrierMessageId)) return;
    this.append(encode({ ack: carrierMessageId }));
  }

  /** Writes what was appended in this turn now (it would go on the next tick anyway). */
  flush(): void {
    if (this.fd === undefined || this.pending.length === 0) return;
    const lines = this.pending;
    this.pending = [];
    fs.writeSync(this.fd, lines.length === 1 ? lines[0]! : Buffer.concat(lines));
    this.lines += lines.length;
    if (this.lines > this.compactAfter && this.lines > 4 * this.owed.size) this.compact();
  }

  close(): void {
    if (this.fd === undefined) return;
    this.flush();
    fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private append(line: Buffer): void {
    if (this.pending.push(line) === 1) process.nextTick(() => this.flush());
  }

  /** Rewrites the log as the owed receipts alone; the rename makes it all or nothing. */
  private compact(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    // Whatever was pending is in `owed` already.
    this.pending = [];
    const tmp = `${this.file}.compacting`;
    const parts = [...this.owed.values()].map((owe) => encode({ owe }));
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeSync(fd, Buffer.concat(parts));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.file);
    this.fd = fs.openSync(this.file, 'a');
    this.lines = parts.length;
  }
}
