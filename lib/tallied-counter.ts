import { Counter, type CounterConfiguration, type LabelValues } from 'prom-client';

interface Tally<T extends string> {
  labels: LabelValues<T>;
  n: number;
  /** Counted since the last hand-over (by 0 too: prom-client shows a series once it is counted at all). */
  counted: boolean;
}

type Inc<T extends string> = (labels?: LabelValues<T> | number, value?: number) => void;

/**
 * A prom-client Counter for the counts made several times a message
 * (statuses, sends, submits, callbacks). prom-client validates and hashes the
 * labels at every inc; this one adds to a number found through one Map per
 * label (label values are short strings, hashed once by V8) and hands the
 * sums to prom-client when it collects them: a scrape, the cluster's
 * aggregation or get(). Anything unusual (labels it does not declare, a
 * value that is no positive number, exemplars) goes to prom-client at once,
 * which answers it as it always does.
 */
export class TalliedCounter<T extends string> extends Counter<T> {
  private readonly names: readonly T[];
  private readonly tallies = new Map<unknown, unknown>();
  private readonly pending: Tally<T>[] = [];
  /** prom-client's own inc, kept for what is not tallied. */
  private readonly plainInc: Inc<T>;

  constructor(config: CounterConfiguration<T>) {
    const collect = config.collect;
    super({
      ...config,
      collect(this: Counter<T>) {
        (this as TalliedCounter<T>).handOver();
        return collect?.call(this);
      },
    });
    this.names = config.labelNames ?? [];
    // prom-client sets inc on each instance (its exemplar or its plain kind), over any method of a subclass.
    this.plainInc = (this.inc as Inc<T>).bind(this);
    if (!config.enableExemplars && this.names.length > 0) this.inc = this.tally as Counter<T>['inc'];
  }

  private readonly tally: Inc<T> = (labels, value) => {
    if (
      typeof labels !== 'object' ||
      labels === null ||
      !(value === undefined || (Number.isFinite(value) && value >= 0)) ||
      // Missing, undefined or undeclared labels: prom-client's validation, as ever, before any tally is made of them.
      Object.keys(labels).length !== this.names.length
    ) {
      return this.plainInc(labels, value);
    }
    let level: Map<unknown, unknown> = this.tallies;
    for (let i = 0; i < this.names.length; i++) {
      const v = labels[this.names[i]!];
      if (v === undefined) return this.plainInc(labels, value);
      let next = level.get(v);
      if (next === undefined) {
        next = i === this.names.length - 1 ? this.newTally(labels) : new Map();
        level.set(v, next);
      }
      level = next as Map<unknown, unknown>;
    }
    const tally = level as unknown as Tally<T>;
    tally.n += value ?? 1;
    tally.counted = true;
  };

  override remove(...values: string[]): void;
  override remove(labels: LabelValues<T>): void;
  override remove(...args: unknown[]): void {
    // What was counted of the series goes to prom-client first, and away with it.
    this.handOver();
    (super.remove as (...a: unknown[]) => void)(...args);
  }

  override reset(): void {
    // prom-client's constructor resets before this class's fields exist.
    for (const t of this.pending ?? []) [t.n, t.counted] = [0, false];
    super.reset();
  }

  private newTally(labels: LabelValues<T>): Tally<T> {
    // Only the declared labels: every key was checked to be one of them, but a copy is what is kept.
    const kept = Object.fromEntries(this.names.map((n) => [n, labels[n]])) as LabelValues<T>;
    const tally = { labels: kept, n: 0, counted: false };
    this.pending.push(tally);
    return tally;
  }

  /** Adds what was counted since the last collection to prom-client's own values. */
  private handOver(): void {
    for (const t of this.pending) {
      if (!t.counted) continue;
      const n = t.n;
      [t.n, t.counted] = [0, false];
      this.plainInc(t.labels, n);
    }
  }
}
