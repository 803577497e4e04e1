/**
 * A binary min-heap ordered by a time, then by the order items were pushed
 * (so items of the same time come out as they went in): push and pop in
 * O(log n), so a million scheduled messages added in any order cost no array
 * shifting.
 */
export function createTimeHeap<T>(timeOf: (item: T) => number) {
  const items: { item: T; time: number; seq: number }[] = [];
  let pushed = 0;
  const less = (a: number, b: number): boolean => {
    const x = items[a]!;
    const y = items[b]!;
    return x.time < y.time || (x.time === y.time && x.seq < y.seq);
  };
  const swap = (a: number, b: number): void => {
    const t = items[a]!;
    items[a] = items[b]!;
    items[b] = t;
  };
  return {
    push(item: T): void {
      items.push({ item, time: timeOf(item), seq: pushed++ });
      let i = items.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!less(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
    },
    /** The earliest item, left in place. */
    peek(): T | undefined {
      return items[0]?.item;
    },
    /** Takes the earliest item out. */
    pop(): T | undefined {
      if (items.length === 0) return undefined;
      const top = items[0]!;
      const last = items.pop()!;
      if (items.length > 0) {
        items[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < items.length && less(l, m)) m = l;
          if (r < items.length && less(r, m)) m = r;
          if (m === i) break;
          swap(i, m);
          i = m;
        }
      }
      return top.item;
    },
    get size(): number {
      return items.length;
    },
  };
}
