import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const DIR = import.meta.dirname;
const SCRIPTS = fs.readdirSync(DIR).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== 'common.ts');

/**
 * k6 cannot be installed here, so each script is bundled the way k6 loads it:
 * an ES module, `k6` and `k6/*` provided by k6 itself, and local modules
 * resolved by their literal file name (k6 adds no extension: `./common` is not
 * found, `./common.ts` is).
 */
async function bundleAsK6Would(file: string) {
  return build({
    entryPoints: [path.join(DIR, file)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    external: ['k6', 'k6/*'],
    resolveExtensions: [],
    logLevel: 'silent',
  });
}

describe('k6 scripts', () => {
  it('are all found', () => {
    expect(SCRIPTS).toEqual(expect.arrayContaining(['sms-v2.ts', 'gateway-v1.ts', 'campaign-manager.ts', 'intelligent-messaging.ts']));
  });

  for (const file of SCRIPTS) {
    it(`${file} loads as k6 loads it: every local import resolves and it exports options and a default function`, async () => {
      const result = await bundleAsK6Would(file);
      const code = result.outputFiles[0]!.text;
      expect(code).toMatch(/export\s*\{[^}]*\boptions\b/);
      expect(code).toMatch(/export\s*\{[^}]*\bdefault\b|export default/);
      expect(code).not.toMatch(/from\s+["']\.\.?\//);
    });
  }

  it('refuses an import without its extension, as k6 does', async () => {
    const dir = fs.mkdtempSync(path.join(DIR, '.k6-probe-'));
    try {
      fs.writeFileSync(path.join(dir, 'common.ts'), 'export const x = 1;\n');
      fs.writeFileSync(path.join(dir, 'script.ts'), "import { x } from './common';\nexport const options = {};\nexport default function () { return x; }\n");
      await expect(
        build({
          entryPoints: [path.join(dir, 'script.ts')],
          bundle: true,
          write: false,
          format: 'esm',
          external: ['k6', 'k6/*'],
          resolveExtensions: [],
          logLevel: 'silent',
        }),
      ).rejects.toThrow(/Could not resolve/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
