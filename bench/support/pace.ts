/**
 * Whether a system hands its carrier messages as fast as it accepts them
 * (issue 13's end-to-end row: "backlog does not grow"). While a load runs,
 * `watchPace` samples, once a second, how many messages the system has
 * accepted and how many reached its SMSC; `paceOf` turns the samples into
 * rates and the backlog's growth, a least-squares slope over every sample, so
 * one late sample (a batch in flight, a flush) does not decide it.
 */
export interface PaceSample {
  /** Milliseconds since the watch started. */
  atMs: number;
  accepted: number;
  reached: number;
}

export interface Pace {
  seconds: number;
  acceptedPerS: number;
  reachedPerS: number;
  /** Accepted and not yet at the SMSC, at the first and the last sample. */
  backlogStart: number;
  backlogEnd: number;
  /** How fast the backlog grew, messages a second (negative when it shrank). */
  growthPerS: number;
  /** The backlog grew by at most 1 % of the acceptance rate (or 10 a second, whichever is more). */
  keptPace: boolean;
}

/** Growth allowed, as a share of the acceptance rate: the in-flight window and its jitter, not a queue building up. */
const GROWTH_TOLERANCE = 0.01;
const GROWTH_FLOOR_PER_S = 10;

export function paceOf(samples: readonly PaceSample[]): Pace | undefined {
  if (samples.length < 2) return undefined;
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const seconds = (last.atMs - first.atMs) / 1000;
  if (seconds <= 0) return undefined;
  const backlog = samples.map((s) => ({ t: s.atMs / 1000, b: s.accepted - s.reached }));
  const meanT = backlog.reduce((n, s) => n + s.t, 0) / backlog.length;
  const meanB = backlog.reduce((n, s) => n + s.b, 0) / backlog.length;
  let covariance = 0;
  let variance = 0;
  for (const s of backlog) {
    covariance += (s.t - meanT) * (s.b - meanB);
    variance += (s.t - meanT) ** 2;
  }
  const growthPerS = covariance / variance;
  const acceptedPerS = (last.accepted - first.accepted) / seconds;
  return {
    seconds,
    acceptedPerS,
    reachedPerS: (last.reached - first.reached) / seconds,
    backlogStart: backlog[0]!.b,
    backlogEnd: backlog[backlog.length - 1]!.b,
    growthPerS,
    keptPace: growthPerS <= Math.max(GROWTH_TOLERANCE * acceptedPerS, GROWTH_FLOOR_PER_S),
  };
}

/**
 * Samples `read` every `everyMs` from now until `stop()`, which takes one last
 * sample and resolves with them all. A read that fails (the metrics page busy)
 * is skipped, not fatal: the slope needs the samples it has.
 */
export function watchPace(read: () => Promise<{ accepted: number; reached: number }>, everyMs = 1000): { stop(): Promise<PaceSample[]> } {
  const from = performance.now();
  const samples: PaceSample[] = [];
  let reading: Promise<void> = Promise.resolve();
  const sample = (): void => {
    reading = reading.then(async () => {
      const atMs = performance.now() - from;
      try {
        const { accepted, reached } = await read();
        if (Number.isFinite(accepted) && Number.isFinite(reached)) samples.push({ atMs, accepted, reached });
      } catch {
        // skipped
      }
    });
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      sample();
      await reading;
      return samples;
    },
  };
}
