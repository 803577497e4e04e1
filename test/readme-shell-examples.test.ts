import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const README = fs.readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
/** What a shell sets by itself: an example may use these without setting them. */
const SHELL_VARIABLES = new Set(['HOME', 'PWD']);

describe("README's shell examples", () => {
  it('set every variable they use, so each runs as written after the quick start', () => {
    const unset: string[] = [];
    for (const block of README.matchAll(/```sh\n([\s\S]*?)```/g)) {
      const text = block[1]!;
      const line = README.slice(0, block.index).split('\n').length;
      for (const [, name] of text.matchAll(/\$\{?([A-Za-z_]\w*)/g)) {
        const set = new RegExp(`(^|[\\s;(])(export )?${name}=`, 'm').test(text);
        if (!set && !SHELL_VARIABLES.has(name!)) unset.push(`$${name} in the example at line ${line}`);
      }
    }
    expect(unset).toEqual([]);
  });
});
