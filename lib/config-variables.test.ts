import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Every HERMOD_* name resolveConfig looks at, over environments that take each of its branches. */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  const branches: Record<string, string>[] = [
    {},
    { HERMOD_BOOTSTRAP_APP: 'acme', HERMOD_BOOTSTRAP_PASSWORD: 'pw' },
    {
      HERMOD_BUS: 'kafka',
      HERMOD_KAFKA_BROKERS: 'kafka.example.com:9092',
      HERMOD_STATE: 'redis',
      HERMOD_HISTORY: 'clickhouse',
      HERMOD_CLICKHOUSE_URL: 'http://clickhouse.example.com:8123',
    },
    { HERMOD_BUS: 'redis', HERMOD_STATE: 'redis' },
  ];
  for (const values of branches) {
    const env = new Proxy(values, {
      get(target, name) {
        if (typeof name === 'string') read.add(name);
        return Reflect.get(target, name) as string | undefined;
      },
    });
    try {
      resolveConfig(env);
    } catch {
      // A branch that refuses its combination still shows what it read.
    }
  }
  return read;
}

/** Variables hermod sets for its own processes, and the k6 scripts' own (read by k6, not by hermod). */
function variablesOfK6Scripts(): Set<string> {
  const names = new Set<string>();
  for (const file of fs.readdirSync(path.join(ROOT, 'bench/k6'))) {
    if (!file.endsWith('.ts')) continue;
    for (const m of fs.readFileSync(path.join(ROOT, 'bench/k6', file), 'utf8').matchAll(/__ENV\.(HERMOD_[A-Z0-9_]+)/g)) names.add(m[1]!);
  }
  return names;
}

/** Variables the test runner reads (vitest.config.ts), which README's test section may name. */
function variablesOfTestRunner(): Set<string> {
  const text = fs.readFileSync(path.join(ROOT, 'vitest.config.ts'), 'utf8');
  return new Set([...text.matchAll(/process\.env\.(HERMOD_[A-Z0-9_]+)/g)].map((m) => m[1]!));
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('configuration variables', () => {
  const read = variablesRead();
  const k6 = variablesOfK6Scripts();
  const testRunner = variablesOfTestRunner();
  const documents = [path.join(ROOT, 'README.md'), ...filesUnder(path.join(ROOT, 'deploy'))];

  for (const file of documents) {
    it(`named in ${path.relative(ROOT, file)} are all ones hermod reads`, () => {
      const text = fs.readFileSync(file, 'utf8');
      const unknown = new Set<string>();
      for (const m of text.matchAll(/HERMOD_[A-Z0-9_]*[A-Z0-9]_?(\*)?/g)) {
        const name = m[0].replace(/\*$/, '');
        // `HERMOD_SMTP_*` names a family: some variable of it must be read.
        const known = name.endsWith('_') ? [...read].some((r) => r.startsWith(name)) : read.has(name) || k6.has(name) || testRunner.has(name);
        if (!known) unknown.add(name);
      }
      expect([...unknown], `${path.relative(ROOT, file)} names variables that lib/config.ts does not read`).toEqual([]);
    });
  }

  it('are found by the check itself (it would see a misspelt one)', () => {
    expect(variablesRead().has('HERMOD_BUS_PARTITIONS')).toBe(true);
    expect(variablesRead().has('HERMOD_KAFKA_PARTITIONS')).toBe(false);
    expect(variablesOfTestRunner().has('HERMOD_TEST_SHUFFLE')).toBe(true);
  });
});
