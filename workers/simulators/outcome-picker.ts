export type Outcome = 'delivered' | 'undeliverable' | 'expired' | 'rejected';
export type OutcomeWeights = Record<Outcome, number>;

const OUTCOMES: readonly Outcome[] = ['delivered', 'undeliverable', 'expired', 'rejected'];

/** mulberry32: a tiny seeded PRNG, so a seeded simulator picks the same outcomes every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Picks outcomes in proportion to their weights (missing ones weigh 0; all
 * zero means always delivered). With a seed the sequence is reproducible.
 */
export function createOutcomePicker(weights: Partial<OutcomeWeights> = {}, seed?: number): () => Outcome {
  const random = seed === undefined ? Math.random : seededRandom(seed);
  const w = OUTCOMES.map((o) => Math.max(0, weights[o] ?? 0));
  const total = w.reduce((a, b) => a + b, 0);
  if (total === 0) return () => 'delivered';
  const only = w.filter((x) => x > 0).length === 1 ? OUTCOMES[w.findIndex((x) => x > 0)]! : undefined;
  if (only) return () => only;
  return () => {
    let r = random() * total;
    for (let i = 0; i < OUTCOMES.length; i++) {
      r -= w[i]!;
      if (r < 0) return OUTCOMES[i]!;
    }
    return OUTCOMES[OUTCOMES.length - 1]!;
  };
}
