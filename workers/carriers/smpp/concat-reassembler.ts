import type { ConcatInfo } from './short-message';
import { FifoMap } from '../../../lib/fifo-map';

interface Entry<M> {
  total: number;
  received: number;
  parts: (Buffer | undefined)[];
  metas: (M | undefined)[];
  firstAt: number;
}

export interface Reassembled<M> {
  /** The parts' payloads (UDH removed) joined in sequence order. */
  payload: Buffer;
  /** Per-part metadata in sequence order. */
  metas: M[];
}

/**
 * Collects the parts of concatenated messages (keyed by the caller, e.g.
 * source + destination + reference) and hands back the whole payload once
 * every part has arrived, in any order. Incomplete messages are dropped after
 * `ttlMs`; at most `maxPending` are kept. Joining bytes before decoding keeps
 * characters that a sender split across parts intact.
 */
export class ConcatReassembler<M = undefined> {
  private readonly pending = new FifoMap<string, Entry<M>>();
  private lastSweep = 0;

  constructor(
    private readonly ttlMs = 120_000,
    private readonly maxPending = 10_000,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  add(key: string, concat: ConcatInfo, payload: Buffer, meta?: M, now = Date.now()): Reassembled<M> | undefined {
    this.sweep(now);
    const fullKey = `${key}\u0000${concat.ref}`;
    let entry = this.pending.get(fullKey);
    if (entry && entry.total !== concat.total) {
      this.pending.delete(fullKey);
      entry = undefined;
    }
    if (!entry) {
      if (this.pending.size >= this.maxPending) {
        const oldest = this.pending.oldestKey();
        if (oldest !== undefined) this.pending.delete(oldest);
      }
      entry = { total: concat.total, received: 0, parts: new Array(concat.total), metas: new Array(concat.total), firstAt: now };
      this.pending.set(fullKey, entry);
    }
    const i = concat.seq - 1;
    if (entry.parts[i] === undefined) entry.received++;
    entry.parts[i] = Buffer.from(payload); // the payload is a view into a socket chunk
    entry.metas[i] = meta;
    if (entry.received < entry.total) return undefined;
    this.pending.delete(fullKey);
    return { payload: Buffer.concat(entry.parts as Buffer[]), metas: entry.metas as M[] };
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.ttlMs / 4) return;
    this.lastSweep = now;
    for (const [key, entry] of this.pending) {
      if (now - entry.firstAt < this.ttlMs) break;
      this.pending.delete(key);
    }
  }

  clear(): void {
    this.pending.clear();
  }
}
