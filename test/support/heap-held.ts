import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Bytes of V8 heap that what `make` returns keeps alive, per item: the heap
 * after a full collection with it held, less the heap before, over `count`.
 */
export function heapHeldPer(count: number, make: () => unknown): number {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  gc();
  const before = v8.getHeapStatistics().used_heap_size;
  const held = make();
  gc();
  const after = v8.getHeapStatistics().used_heap_size;
  if (held === undefined) throw new Error('make() must return what it built, so it stays alive');
  return (after - before) / count;
}
