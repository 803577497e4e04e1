import { Gauge, type GaugeConfiguration, type LabelValues } from 'prom-client';

/**
 * A prom-client Gauge whose series are read when it is collected (a scrape,
 * the cluster's aggregation or get()), for values that change several times
 * a message, such as an SMPP window: setting prom-client's gauge at every
 * change validated and hashed its labels each time, and a scrape only ever
 * shows the last value anyway.
 */
export class ReadGauge<T extends string> extends Gauge<T> {
  private readonly readers = new Map<string, { labels: LabelValues<T>; read: () => number }>();

  constructor(config: Omit<GaugeConfiguration<T>, 'collect'>) {
    super({
      ...config,
      collect(this: Gauge<T>) {
        (this as ReadGauge<T>).readAll();
      },
    });
  }

  /** Shows `read()` under `labels` from now on; the function returned removes the series. */
  watch(labels: LabelValues<T>, read: () => number): () => void {
    const key = JSON.stringify(labels);
    const reader = { labels, read };
    this.readers.set(key, reader);
    this.set(labels, read());
    return () => {
      if (this.readers.get(key) !== reader) return;
      this.readers.delete(key);
      this.remove(labels);
    };
  }

  private readAll(): void {
    for (const { labels, read } of this.readers.values()) this.set(labels, read());
  }
}
