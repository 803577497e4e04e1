import type { ConcatInfo } from './short-message';
import { FifoMap } from '../../../lib/fifo-map';

interface Entry<M> {
  /** The parts of a message handed back whole under the same key, when this one began with a part equal to one of them. */
  echoOf?: Buffer[];
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

/** A message whose parts did not all come: the ones that did, in sequence order (undefined where one is missing). */
export interface Incomplete<M> {
  total: number;
  parts: (Buffer | undefined)[];
  metas: (M | undefined)[];
}

/**
 * Collects the parts of concatenated messages (keyed by the caller, e.g.
 * source + destination + reference) and hands back the whole payload once
 * every part has arrived, in any order. Incomplete messages are given up
 * after `ttlMs`, and the oldest beyond `maxPending`: dropped, or with
 * `keepIncomplete` kept for `expire` to hand back as they are. Joining bytes
 * before decoding keeps characters that a sender split across parts intact.
 */
export class ConcatReassembler<M = undefined> {
  private readonly pending = new FifoMap<string, Entry<M>>();
  /**
   * Messages handed back whole in the last `ttlMs`, with their parts: a carrier that missed our answer to a part
   * delivers that part again, and after the message was whole it would start a message of its own, handed back
   * cut off once given up on. Parts equal to those a whole message had, with nothing else coming, are given up on
   * silently; a new message under the same key, starting as the last did or not, is collected as ever.
   */
  private readonly whole = new FifoMap<string, { total: number; parts: Buffer[]; at: number }>();
  private incomplete: Incomplete<M>[] = [];
  private lastSweep = 0;

  constructor(
    private readonly ttlMs = 120_000,
    private readonly maxPending = 10_000,
    private readonly keepIncomplete = false,
    /** Give up silently on parts again of a message handed back whole (`whole` above): for replies, which carriers redeliver. */
    private readonly dropRepeatedParts = false,
  ) {}

  /** The messages given up on since the last call (with `all`, every one still waiting too), as far as they came. */
  expire(now = Date.now(), all = false): Incomplete<M>[] {
    this.lastSweep = 0;
    this.sweep(now);
    if (all) for (const key of [...this.pending.keys()]) this.giveUp(key);
    const given = this.incomplete;
    this.incomplete = [];
    return given;
  }

  private giveUp(key: string): void {
    const entry = this.pending.get(key);
    if (!entry) return;
    this.pending.delete(key);
    // Only parts a carrier delivered again of a message already whole: nothing new to hand back.
    const { echoOf } = entry;
    if (echoOf && entry.parts.every((part, i) => part === undefined || part.equals(echoOf[i]!))) return;
    if (this.keepIncomplete) this.incomplete.push({ total: entry.total, parts: entry.parts, metas: entry.metas });
  }

  get size(): number {
    return this.pending.size;
  }

  add(key: string, concat: ConcatInfo, payload: Buffer, meta?: M, now = Date.now()): Reassembled<M> | undefined {
    this.sweep(now);
    const fullKey = `${key}\u0000${concat.ref}`;
    let entry = this.pending.get(fullKey);
    // A part equal to the one a message handed back whole had under this key: collected as ever (a new message may
    // start as the last did), but given up on silently if nothing else comes.
    const done = !entry && this.dropRepeatedParts ? this.whole.get(fullKey) : undefined;
    const echo = done && done.total === concat.total && now - done.at < this.ttlMs && done.parts[concat.seq - 1]?.equals(payload) ? done.parts : undefined;
    if (entry && entry.total !== concat.total) {
      this.pending.delete(fullKey);
      entry = undefined;
    }
    if (!entry) {
      if (this.pending.size >= this.maxPending) {
        const oldest = this.pending.oldestKey();
        if (oldest !== undefined) this.giveUp(oldest);
      }
      entry = { total: concat.total, received: 0, parts: new Array(concat.total), metas: new Array(concat.total), firstAt: now, echoOf: echo };
      this.pending.set(fullKey, entry);
    }
    const i = concat.seq - 1;
    if (entry.parts[i] === undefined) entry.received++;
    entry.parts[i] = Buffer.from(payload); // the payload is a view into a socket chunk
    entry.metas[i] = meta;
    if (entry.received < entry.total) return undefined;
    this.pending.delete(fullKey);
    if (this.dropRepeatedParts) {
      this.whole.delete(fullKey);
      this.whole.set(fullKey, { total: entry.total, parts: entry.parts as Buffer[], at: now });
      while (this.whole.size > this.maxPending) this.whole.shift();
    }
    return { payload: Buffer.concat(entry.parts as Buffer[]), metas: entry.metas as M[] };
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < this.ttlMs / 4) return;
    this.lastSweep = now;
    const old: string[] = [];
    for (const [key, entry] of this.pending) {
      if (now - entry.firstAt < this.ttlMs) break;
      old.push(key);
    }
    for (const key of old) this.giveUp(key);
    for (let key = this.whole.oldestKey(); key !== undefined && now - this.whole.get(key)!.at >= this.ttlMs; key = this.whole.oldestKey())
      this.whole.delete(key);
  }

  clear(): void {
    this.pending.clear();
    this.whole.clear();
    this.incomplete = [];
  }
}
