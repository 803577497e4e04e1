import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

/**
 * `npm ci` refuses a lock file that lacks an entry for any optional
 * dependency, and `npm install` leaves out the platform packages a registry
 * mirror does not carry. This keeps the entries there for every platform
 * package of chdb and buf, so `npm ci` works on a clean clone.
 */
describe('package-lock.json', () => {
  it('has an entry for every optional platform package of chdb and buf', () => {
    const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
    for (const parent of ['chdb', '@bufbuild/buf']) {
      const optional = Object.keys(lock.packages[`node_modules/${parent}`]?.optionalDependencies ?? {});
      expect(optional.length).toBeGreaterThan(0);
      for (const name of optional) expect(lock.packages[`node_modules/${name}`], `${name} is missing from package-lock.json`).toBeDefined();
    }
  });
});
