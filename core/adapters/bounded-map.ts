import { FifoMap } from '../../lib/fifo-map';

/**
 * A map whose entries expire `ttlMs` after their last write, holding at most
 * `max` of them; with `retiring`, a second queue for entries done with (a
 * final status): retire() moves an entry there, where it lives
 * `retiring.ttlMs` from then, at most `retiring.max` of them. Each queue
 * expires in its insertion order (a FifoMap tells its oldest entry in O(1),
 * however many entries left from the middle), so each has one time to live
 * and both checks cost O(1) per write, with no timer.
 *
 * Compact, because hot state holds a million of these under a campaign and
 * V8 marks every one of them at each full collection: a key maps to a slot
 * number (a small integer, no object), the slot's expiry sits in a
 * Float64Array and its value in one array per map (numbers unboxed when every
 * value is a number). An entry costs its Map slot, its key and 16 bytes,
 * instead of a { value, expires } object and a boxed expiry besides.
 */
export class BoundedMap<V> {
  private readonly entries = new FifoMap<string, number>();
  private readonly retired = new FifoMap<string, number>();
  private expires = new Float64Array(1024);
  private values: V[] = [];
  private free: number[] = [];

  /** `empty` fills a slot no entry uses (for numbers, a number, so the values stay unboxed). */
  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
    private readonly empty: V,
    private readonly retiring?: { ttlMs: number; max: number },
  ) {}

  get(key: string, now: number): V | undefined {
    let queue = this.entries;
    let slot = queue.get(key);
    if (slot === undefined) {
      queue = this.retired;
      slot = queue.get(key);
      if (slot === undefined) return undefined;
    }
    if (this.expires[slot]! <= now) {
      queue.delete(key);
      this.release(slot);
      return undefined;
    }
    return this.values[slot];
  }

  set(key: string, value: V, now: number): void {
    // An existing key is updated in place: no delete and re-insert. Insertion
    // order is then first-write order, which is what the size bound and
    // expire() need: a key rewritten later only lives a little longer. A
    // retired entry stays retired, on its own time to live.
    let slot = this.entries.get(key);
    if (slot !== undefined) {
      this.values[slot] = value;
      this.expires[slot] = now + this.ttlMs;
      return;
    }
    slot = this.retired.get(key);
    if (slot !== undefined) {
      this.values[slot] = value;
      return;
    }
    slot = this.take();
    this.values[slot] = value;
    this.expires[slot] = now + this.ttlMs;
    this.entries.set(key, slot);
    while (this.entries.size > this.max) this.dropOldest(this.entries);
  }

  /** Whether `key` is in the retired queue (expired or not). */
  isRetired(key: string): boolean {
    return this.retired.has(key);
  }

  /** Moves `key` to the retired queue, to live `retiring.ttlMs` from `now` (no-op without a retiring queue or the key). */
  retire(key: string, now: number): void {
    if (!this.retiring) return;
    const slot = this.entries.get(key);
    if (slot === undefined) return;
    this.entries.delete(key);
    this.expires[slot] = now + this.retiring.ttlMs;
    this.retired.set(key, slot);
    while (this.retired.size > this.retiring.max) this.dropOldest(this.retired);
  }

  /** Drops expired entries from the front of each queue (the oldest first). */
  expire(now: number): void {
    this.expireFront(this.entries, now);
    this.expireFront(this.retired, now);
  }

  clear(): void {
    this.entries.clear();
    this.retired.clear();
    this.expires = new Float64Array(1024);
    this.values = [];
    this.free = [];
  }

  get size(): number {
    return this.entries.size + this.retired.size;
  }

  private expireFront(queue: FifoMap<string, number>, now: number): void {
    for (let key = queue.oldestKey(); key !== undefined; key = queue.oldestKey()) {
      const slot = queue.get(key)!;
      if (this.expires[slot]! > now) return;
      queue.delete(key);
      this.release(slot);
    }
  }

  private dropOldest(queue: FifoMap<string, number>): void {
    const key = queue.oldestKey();
    if (key === undefined) return;
    const slot = queue.get(key)!;
    queue.delete(key);
    this.release(slot);
  }

  /** A free slot: one released before, else the next new one (the expiry array doubles when full). */
  private take(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    const slot = this.values.length;
    if (slot === this.expires.length) {
      const grown = new Float64Array(this.expires.length * 2);
      grown.set(this.expires);
      this.expires = grown;
    }
    // Appended, so the values array stays packed.
    this.values.push(this.empty);
    return slot;
  }

  private release(slot: number): void {
    this.values[slot] = this.empty;
    this.free.push(slot);
  }
}
