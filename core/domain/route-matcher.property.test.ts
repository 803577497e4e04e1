import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RouteRule, RouteTarget } from '../../lib/carriers-file';
import { createRouteMatcher, DEFAULT_RULE, PORTED_RULE, type RouteInput } from './route-matcher';

const CARRIERS = ['spark', 'one-nz', '2degrees', 'telstra'] as const;
const carrier = fc.constantFrom(...CARRIERS);
const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

const target: fc.Arbitrary<RouteTarget> = fc.oneof(
  carrier.map((c) => ({ kind: 'carrier' as const, carriers: [c] as const })),
  fc.uniqueArray(carrier, { minLength: 1, maxLength: 4 }).map((carriers) => ({ kind: 'failover' as const, carriers })),
  fc.uniqueArray(carrier, { minLength: 1, maxLength: 4 }).chain((carriers) =>
    fc
      .array(fc.nat(10), { minLength: carriers.length, maxLength: carriers.length })
      .filter((w) => w.some((x) => x > 0))
      .map((weights) => ({ kind: 'split' as const, carriers, weights })),
  ),
);

const rules: fc.Arbitrary<RouteRule[]> = fc
  .array(
    fc.record({
      prefixes: fc.array(
        digits(1, 4).map((d) => `+${d}`),
        { maxLength: 3 },
      ),
      applications: fc.array(fc.constantFrom('acme', 'kōrero'), { maxLength: 2 }),
      source: fc.constantFrom(undefined, 'alphanumeric' as const, 'number' as const),
      channels: fc.array(fc.constantFrom('sms', 'wab'), { maxLength: 1 }),
      target,
    }),
    { maxLength: 8 },
  )
  .map((list) => list.map((r, i) => ({ name: `rule-${i}`, ...r })));

const input: fc.Arbitrary<RouteInput> = fc.record({
  id: fc.uuid(),
  // Mostly numbers, some with spaces or no +, and some junk: every one still gets a decision.
  destination: fc.oneof(
    digits(4, 15).map((d) => `+${d}`),
    digits(4, 15),
    digits(6, 12).map((d) => `+${d.slice(0, 2)} ${d.slice(2)}`),
    fc.string({ maxLength: 20 }),
  ),
  applicationId: fc.constantFrom('acme', 'kōrero', 'other'),
  source: fc.constantFrom('', '+6421555000', 'Kōrero', 'ACME', '4321', '你好'),
  channel: fc.constantFrom('sms', 'wab'),
});

/** The rule a careful reader of the file would pick by hand: the first whose every condition holds. */
function firstMatchByHand(list: readonly RouteRule[], m: RouteInput): RouteRule | undefined {
  const d = m.destination.replace(/[^0-9]/g, '');
  const kind = /[A-Za-zĀ-ſ\u4e00-\u9fff]/.test(m.source) ? 'alphanumeric' : 'number';
  return list.find(
    (r) =>
      (r.prefixes.length === 0 || r.prefixes.some((p) => d.startsWith(p.slice(1)))) &&
      (r.applications.length === 0 || r.applications.includes(m.applicationId)) &&
      (r.source === undefined || r.source === kind) &&
      (r.channels.length === 0 || r.channels.includes(m.channel)),
  );
}

describe('the route matcher', () => {
  it('decides by the first rule that matches, and by the default route when none does', () => {
    fc.assert(
      fc.property(rules, target, input, (list, defaultTarget, m) => {
        const decide = createRouteMatcher({ rules: list, defaultTarget, ported: new Map() });
        const expected = firstMatchByHand(list, m);
        const d = decide(m);
        expect(d.rule).toBe(expected?.name ?? DEFAULT_RULE);
        expect(new Set(d.carriers)).toEqual(new Set((expected?.target ?? defaultTarget).carriers));
      }),
      { numRuns: 500 },
    );
  });

  it('gives every destination exactly one decision: known carriers, each once, the same every time', () => {
    fc.assert(
      fc.property(
        rules,
        target,
        input,
        fc.dictionary(
          digits(6, 12).map((d) => `+${d}`),
          carrier,
        ),
        (list, defaultTarget, m, ported) => {
          const decide = createRouteMatcher({ rules: list, defaultTarget, ported: new Map(Object.entries(ported)) });
          const d = decide(m);
          expect(d.carriers.length).toBeGreaterThan(0);
          expect(new Set(d.carriers).size).toBe(d.carriers.length);
          for (const c of d.carriers) expect(CARRIERS).toContain(c);
          expect(decide({ ...m })).toEqual(d);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('sends a ported number first to the carrier it moved to, whatever prefix rule would have matched', () => {
    fc.assert(
      fc.property(rules, target, input, carrier, (list, defaultTarget, m, movedTo) => {
        const number = `+${m.destination.replace(/\D/g, '') || '6421'}`;
        const decide = createRouteMatcher({ rules: list, defaultTarget, ported: new Map([[number, movedTo]]) });
        const d = decide({ ...m, destination: number });
        expect(d.rule).toBe(PORTED_RULE);
        expect(d.carriers[0]).toBe(movedTo);
      }),
    );
  });
});
