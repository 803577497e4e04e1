import fc from 'fast-check';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { FifoMap } from './fifo-map';

type Op =
  | { op: 'set'; key: string; value: number }
  | { op: 'delete'; key: string }
  | { op: 'moveToBack'; key: string }
  | { op: 'shift' }
  | { op: 'oldest' }
  | { op: 'clear' };

// Few distinct keys, so sets hit existing keys and deletes hit the head often; world text among them.
const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'Māori', '👋🏽', '例子');
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('set' as const), key, value: fc.integer() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), key }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('moveToBack' as const), key }) },
  { weight: 3, arbitrary: fc.constant({ op: 'shift' as const }) },
  { weight: 3, arbitrary: fc.constant({ op: 'oldest' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
);

/** The obvious model: keys in insertion order in an array. */
class Model {
  order: string[] = [];
  values = new Map<string, number>();
  set(k: string, v: number): void {
    if (!this.values.has(k)) this.order.push(k);
    this.values.set(k, v);
  }
  delete(k: string): void {
    if (!this.values.delete(k)) return;
    this.order.splice(this.order.indexOf(k), 1);
  }
}

describe('FifoMap', () => {
  it('always names as oldest the key inserted longest ago that is still there, whatever mix of sets, deletes and shifts came before', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const m = new FifoMap<string, number>();
        const model = new Model();
        for (const o of ops) {
          switch (o.op) {
            case 'set':
              m.set(o.key, o.value);
              model.set(o.key, o.value);
              break;
            case 'delete':
              expect(m.delete(o.key)).toBe(model.values.has(o.key));
              model.delete(o.key);
              break;
            case 'moveToBack': {
              const v = m.get(o.key);
              if (v === undefined) break;
              m.delete(o.key);
              m.set(o.key, v);
              model.delete(o.key);
              model.set(o.key, v);
              break;
            }
            case 'shift': {
              const expected = model.order[0];
              expect(m.shift()).toBe(expected);
              if (expected !== undefined) model.delete(expected);
              break;
            }
            case 'oldest':
              expect(m.oldestKey()).toBe(model.order[0]);
              break;
            case 'clear':
              m.clear();
              model.order = [];
              model.values.clear();
              break;
          }
          expect(m.size).toBe(model.order.length);
          expect([...m.keys()]).toEqual(model.order);
          for (const [k, v] of model.values) expect(m.get(k)).toBe(v);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('keeps a capped queue in insertion order across the rehashes of a large table', () => {
    const m = new FifoMap<number, number>();
    for (let i = 0; i < 50_000; i++) {
      m.set(i, i);
      // Holes in the middle as well as at the front, as a queue of messages that finish out of order.
      if (i % 7 === 3) m.delete(i - 2);
      while (m.size > 10_000) m.shift();
    }
    const keys = [...m.keys()];
    expect(keys).toEqual([...keys].sort((a, b) => a - b));
    expect(m.oldestKey()).toBe(keys[0]);
    expect(keys.at(-1)).toBe(49_999);
    expect(m.size).toBe(10_000);
  });

  it('answers undefined for the oldest of an empty map and starts over after it empties', () => {
    const m = new FifoMap<string, string>();
    expect(m.oldestKey()).toBeUndefined();
    expect(m.shift()).toBeUndefined();
    m.set('kia', 'ora');
    expect(m.shift()).toBe('kia');
    expect(m.oldestKey()).toBeUndefined();
    m.set('mā', '👋🏽');
    expect(m.oldestKey()).toBe('mā');
  });

  it("holds no more than its own entries after 300,000 have passed through while its oldest was never asked for (an SMPP carrier's submit times)", () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const heldAfter = (make: () => { set(k: string, v: number): unknown; delete(k: string): boolean }): number => {
      gc();
      const before = v8.getHeapStatistics().used_heap_size;
      const map = make();
      // Each carrier id set at its submit and deleted at its receipt, 300 in flight.
      for (let i = 0; i < 300_000; i++) {
        map.set(`carrier-${i}`, Date.now() + i);
        if (i >= 300) map.delete(`carrier-${i - 300}`);
      }
      gc();
      const held = v8.getHeapStatistics().used_heap_size - before;
      expect(map).toBeDefined();
      return held;
    };
    const plain = heldAfter(() => new Map<string, number>());
    const fifo = heldAfter(() => new FifoMap<string, number>());
    // The old FifoMap's unmoved iterator kept every table the map had outgrown: 17.6 MB here.
    expect(fifo - plain).toBeLessThan(2 * 1024 * 1024);
  });

  it('still names the right oldest key when asked now and then during a long churn', () => {
    const map = new FifoMap<string, number>();
    for (let i = 0; i < 50_000; i++) {
      map.set(`carrier-${i}`, i);
      if (i >= 300) map.delete(`carrier-${i - 300}`);
      if (i % 4_999 === 0) expect(map.oldestKey()).toBe(`carrier-${Math.max(0, i - 299)}`);
    }
    expect(map.shift()).toBe('carrier-49700');
    expect(map.oldestKey()).toBe('carrier-49701');
  });
});
