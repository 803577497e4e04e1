import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

/**
 * `npm ci` refuses a lock file that lacks an entry for any optional
 * dependency, and `npm install` leaves out the platform packages a registry
 * mirror does not carry (biome's, knip's oxc parser's, chdb's, buf's, …).
 * This keeps an entry there for every optional dependency of every package,
 * so `npm ci` works on a clean clone.
 */
describe('package-lock.json', () => {
  it('has an entry for every optional dependency of every package', () => {
    const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
    const packages: Record<string, { optionalDependencies?: Record<string, string> }> = lock.packages;
    const missing: string[] = [];
    for (const [at, entry] of Object.entries(packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        if (!packages[`${at}/node_modules/${name}`] && !packages[`node_modules/${name}`])
          missing.push(`${name} (optional dependency of ${at || 'the project'})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
