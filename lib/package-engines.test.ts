import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');
const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(root, file), 'utf8'));

/**
 * Only bench/kafka-client-comparison.ts loads @platformatic/kafka, whose own
 * packages ask for Node 22.19 or later; neither hermod nor its tests load it.
 */
const BENCH_ONLY = new Set(['@platformatic/kafka', '@platformatic/dynamic-buffer', '@platformatic/wasm-utils']);

type Version = [number, number, number];

const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** The versions one comparator admits (`^20.19.0`, `>=12.*`, `20`, `<21`) as from ≤ v < below. */
function interval(comparator: string): { from: Version; below: Version } {
  const [, op = '', text = ''] = /^(\^|~|>=|>|<=|<|=)?v?(.*)$/.exec(comparator)!;
  const parts = text
    .split(/[-+]/)[0]!
    .split('.')
    .filter((p) => /^\d+$/.test(p))
    .map(Number);
  const [major = 0, minor = 0, patch = 0] = parts;
  const lowest: Version = [major, minor, patch];
  const none: Version = [0, 0, 0];
  const all: Version = [Number.POSITIVE_INFINITY, 0, 0];
  // The first version above the x-range `parts` names: 12.* → 13.0.0, 0.6.x → 0.7.0, 1.2.3 → 1.2.4.
  const above: Version = [all, [major + 1, 0, 0], [major, minor + 1, 0], [major, minor, patch + 1]][parts.length] as Version;
  switch (op) {
    case '>=':
      return { from: lowest, below: all };
    case '>':
      return { from: above, below: all };
    case '<':
      return { from: none, below: lowest };
    case '<=':
      return { from: none, below: above };
    case '^':
      return { from: lowest, below: major > 0 || parts.length < 2 ? [major + 1, 0, 0] : minor > 0 || parts.length < 3 ? [0, minor + 1, 0] : above };
    case '~':
      return { from: lowest, below: parts.length < 2 ? [major + 1, 0, 0] : [major, minor + 1, 0] };
    default:
      return { from: lowest, below: above };
  }
}

/** The comparator sets of an npm range: `^20.19.0 || >= 22.12` → [['^20.19.0'], ['>=22.12']]. */
function alternatives(range: string): string[][] {
  return range.split('||').map((set) => {
    const comparators = set
      .trim()
      .replace(/(\^|~|>=|>|<=|<|=)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    if (comparators.includes('-')) throw new Error(`hyphen ranges are not read here: ${range}`);
    return comparators.length > 0 ? comparators : ['*'];
  });
}

function satisfies(version: string, range: string): boolean {
  const v = interval(version.replace(/^v/, '')).from;
  return alternatives(range).some((set) =>
    set.every((c) => {
      const { from, below } = interval(c);
      return compare(v, from) >= 0 && compare(v, below) < 0;
    }),
  );
}

/** Where a range starts or stops admitting versions: between two of these, it answers the same for every version. */
const boundaries = (range: string): Version[] =>
  alternatives(range)
    .flat()
    .flatMap((c) => Object.values(interval(c)))
    .filter((v) => Number.isFinite(v[0]));

describe('the Node versions package.json admits', () => {
  const engines: string = readJson('package.json').engines.node;
  const ranges = Object.entries<{ engines?: { node?: string } }>(readJson('package-lock.json').packages).flatMap(([where, entry]) => {
    const name = where.replace(/^.*node_modules\//, '');
    return where && entry.engines?.node && !BENCH_ONLY.has(name) ? [{ name, range: entry.engines.node }] : [];
  });
  // Every version where engines or a package's range changes its answer, and the Node running this test.
  const versions = [...new Set([engines, ...ranges.map((r) => r.range)].flatMap((range) => boundaries(range).map((v) => v.join('.'))))]
    .concat('0.0.0', process.version)
    .filter((v) => satisfies(v, engines))
    .sort((a, b) => compare(interval(a).from, interval(b).from));

  it('reads npm ranges the way npm does', () => {
    expect(satisfies('20.19.0', '^20.19.0 || >=22.12.0')).toBe(true);
    expect(satisfies('20.18.3', '^20.19.0 || >=22.12.0')).toBe(false);
    expect(satisfies('22.12.0', '^20.12||^22.13||>=24.0')).toBe(false);
    expect(satisfies('23.11.0', '^20.12||^22||>=24')).toBe(false);
    expect(satisfies('24.0.0', '^20.12||^22||>=24')).toBe(true);
    expect(satisfies('v21.7.3', '10.* || >= 12.*')).toBe(true);
    expect(satisfies('11.0.0', '10.* || >= 12.*')).toBe(false);
    expect(satisfies('20.0.0', '20 || >=22')).toBe(true);
    expect(satisfies('21.0.0', '20 || >=22')).toBe(false);
    expect(satisfies('20.19.3', '>= 20.19.4 || >= 22.18.0 || >= 24.6.0')).toBe(false);
    expect(satisfies('16.0.0', '>=14 <16')).toBe(false);
    expect(satisfies('15.9.0', '>=14 <16')).toBe(true);
  });

  it('include the Node this test runs on', () => {
    expect(satisfies(process.version, engines), `${process.version} is not in engines "${engines}"`).toBe(true);
  });

  it('are only versions that every installed package accepts', () => {
    const refusals = new Set<string>();
    for (const { name, range } of ranges) {
      const refused = versions.filter((v) => !satisfies(v, range));
      if (refused.length > 0) refusals.add(`${name} (node ${range}) refuses ${refused.join(', ')}`);
    }
    expect([...refusals], `engines "${engines}" admits versions some packages refuse`).toEqual([]);
  });
});
