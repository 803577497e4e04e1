import { Gauge, type GaugeConfiguration } from 'prom-client';

/**
 * A prom-client Gauge with one label whose series are read when it is
 * collected, as a whole map from every source watching it (summed where two
 * name the same label value). A label value read once and no longer in any
 * map reads 0 from then on rather than vanishing, so an alert on it resolves
 * instead of going stale.
 */
export class ReadMapGauge<T extends string> extends Gauge<T> {
  private readonly sources = new Set<() => ReadonlyMap<string, number>>();
  private readonly seen = new Set<string>();
  private readonly label: T;

  constructor(config: Omit<GaugeConfiguration<T>, 'collect' | 'labelNames'> & { labelNames: readonly [T] }) {
    super({
      ...config,
      collect(this: Gauge<T>) {
        (this as ReadMapGauge<T>).readAll();
      },
    });
    this.label = config.labelNames[0];
  }

  /** Shows what `read()` returns at every collection from now on; the function returned stops reading it. */
  watch(read: () => ReadonlyMap<string, number>): () => void {
    this.sources.add(read);
    return () => {
      this.sources.delete(read);
    };
  }

  private readAll(): void {
    const sums = new Map<string, number>();
    for (const read of this.sources) for (const [value, n] of read()) sums.set(value, (sums.get(value) ?? 0) + n);
    for (const value of sums.keys()) this.seen.add(value);
    for (const value of this.seen) this.set({ [this.label]: value } as Record<T, string>, sums.get(value) ?? 0);
  }
}
