import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../lib/errors';
import { errorsTable } from './errors-table';

const file = new URL('../docs/errors.md', import.meta.url);

describe('The errors table', () => {
  it('in docs/errors.md is what the code says today (npm run docs:errors writes it)', () => {
    expect(readFileSync(file, 'utf8'), 'docs/errors.md is stale: run npm run docs:errors').toBe(errorsTable());
  });

  it('has one row per error code', () => {
    const codes = [...errorsTable().matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]);
    expect(codes).toEqual(Object.keys(ERROR_CODES));
  });

  it('gives each interface the status its error renderer answers with', () => {
    const row = (code: string) =>
      errorsTable()
        .split('\n')
        .find((line) => line.startsWith(`| \`${code}\` |`))!
        .split(' | ');
    // Campaign Manager answers validation failures 422; Intelligent Messaging answers every 5xx as 500; v1 names a carrier failure send_failed.
    expect(row('invalid_attrib').slice(2, 7)).toEqual(['400', '400', '`invalid_attrib`', '422', '400']);
    expect(row('carrier_rejected').slice(2, 7)).toEqual(['502', '502', '`send_failed`', '502', '500']);
    expect(row('rate_limited').slice(7)).toEqual(['RESOURCE_EXHAUSTED (8)', 'yes |']);
  });
});
