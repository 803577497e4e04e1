import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { basicAuthMatches } from './console-server';

const header = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
const user = fc.string({ unit: 'grapheme', minLength: 1 }).filter((u) => !u.includes(':'));
const password = fc.string({ unit: 'grapheme' });

describe('operator console Basic authentication', () => {
  it('lets in exactly the configured user and password, whatever characters they hold', () => {
    fc.assert(
      fc.property(user, password, (u, p) => {
        expect(basicAuthMatches(header(u, p), u, p)).toBe(true);
        expect(basicAuthMatches(header(u, `${p}x`), u, p)).toBe(false);
        expect(basicAuthMatches(header(`${u}x`, p), u, p)).toBe(false);
      }),
    );
  });

  it('never lets in any other header, and never throws on one', () => {
    fc.assert(
      fc.property(fc.option(fc.string()), user, password, (h, u, p) => {
        fc.pre(h !== header(u, p));
        expect(basicAuthMatches(h ?? undefined, u, p)).toBe(false);
      }),
    );
  });

  it('reads the user and password as UTF-8 and splits them at the first colon', () => {
    expect(basicAuthMatches(header('kaiwhakahaere', 'tēnā:koe 👋🏽 密码'), 'kaiwhakahaere', 'tēnā:koe 👋🏽 密码')).toBe(true);
    expect(basicAuthMatches(`basic   ${Buffer.from('a:b').toString('base64')}`, 'a', 'b')).toBe(true);
    expect(basicAuthMatches('Bearer abc', 'a', 'b')).toBe(false);
    expect(basicAuthMatches(`Basic ${Buffer.from('ab').toString('base64')}`, 'a', 'b')).toBe(false);
  });
});
