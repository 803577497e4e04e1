import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { paceOf, watchPace, type PaceSample } from './pace';

const run = (seconds: number, acceptedPerS: number, reachedPerS: number, inFlight = 0): PaceSample[] =>
  Array.from({ length: seconds + 1 }, (_, s) => ({
    atMs: s * 1000,
    accepted: Math.round(s * acceptedPerS) + inFlight,
    reached: Math.round(s * reachedPerS),
  }));

describe('end-to-end pace', () => {
  it('says a system kept pace when its carrier gets messages as fast as they are accepted, a steady window in flight', () => {
    const pace = paceOf(run(60, 8000, 8000, 1024))!;
    expect(pace).toMatchObject({ seconds: 60, acceptedPerS: 8000, reachedPerS: 8000, backlogStart: 1024, backlogEnd: 1024, keptPace: true });
    expect(pace.growthPerS).toBeCloseTo(0, 6);
  });

  it('says it fell behind when the backlog grows by more than 1 % of the acceptance rate', () => {
    const pace = paceOf(run(60, 8000, 7800))!;
    expect(pace.growthPerS).toBeCloseTo(200, 6);
    expect(pace.backlogEnd).toBe(12_000);
    expect(pace.keptPace).toBe(false);
    expect(paceOf(run(60, 8000, 7950))!.keptPace).toBe(true);
  });

  it('is not swayed by one late sample: the growth is the slope over all of them', () => {
    const samples = run(60, 8000, 8000, 500);
    samples[59] = { ...samples[59]!, reached: samples[59]!.reached - 5000 };
    expect(paceOf(samples)!.keptPace).toBe(true);
  });

  it('needs two samples a moment apart to say anything', () => {
    expect(paceOf([])).toBeUndefined();
    expect(paceOf([{ atMs: 0, accepted: 5, reached: 0 }])).toBeUndefined();
    expect(
      paceOf([
        { atMs: 0, accepted: 5, reached: 0 },
        { atMs: 0, accepted: 9, reached: 1 },
      ]),
    ).toBeUndefined();
  });

  it('finds the growth of any constant shortfall, whatever the rates', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 50_000 }), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 3, max: 120 }), (rate, shortPct, seconds) => {
        const reachedRate = rate * (1 - shortPct / 100);
        const pace = paceOf(run(seconds, rate, reachedRate))!;
        expect(pace.growthPerS).toBeCloseTo(rate - reachedRate, -1);
        const shortfall = rate - reachedRate;
        const allowed = Math.max(rate / 100, 10);
        if (shortfall > allowed * 1.1 + 1) expect(pace.keptPace).toBe(false);
        if (shortfall < allowed * 0.9 - 1) expect(pace.keptPace).toBe(true);
      }),
    );
  });

  it('samples while the load runs, skips a read that failed and takes a last sample when stopped', async () => {
    let n = 0;
    const watch = watchPace(async () => {
      n++;
      if (n === 2) throw new Error('metrics page busy');
      return { accepted: n * 10, reached: n * 10 - 3 };
    }, 20);
    await new Promise((r) => setTimeout(r, 110));
    const samples = await watch.stop();
    expect(samples.length).toBeGreaterThanOrEqual(4);
    expect(samples.map((s) => s.accepted)).not.toContain(20);
    expect(samples.every((s) => s.accepted - s.reached === 3)).toBe(true);
    expect(samples.at(-1)!.accepted).toBe(n * 10);
  });
});
