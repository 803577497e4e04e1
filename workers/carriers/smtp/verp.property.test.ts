import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageIdOfVerp, verpAddress } from './verp';

const SECRET = 'kia-ora-a-bounce-secret-0123456789';
const domain = fc.constantFrom('example.com', 'bounces.example.org', 'localhost', 'mail.hermod.example');
const paths = (d: string, secret = SECRET) => ({ domain: d, secret });

describe('VERP return paths (property)', () => {
  it('reads back the message id of any return path it wrote, whatever the case of the domain or the tag', () => {
    fc.assert(
      fc.property(fc.uuid(), domain, fc.boolean(), (id, d, upper) => {
        const address = verpAddress(id, paths(d))!;
        const given = upper ? address.replace(/=.*/, (m) => m.toUpperCase()) : address;
        expect(messageIdOfVerp(given, paths(d))).toBe(id);
      }),
    );
  });

  it('reads no id from a return path signed for another id, or with another secret, or with a tag changed in any character', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), domain, fc.string({ minLength: 16, maxLength: 40 }), fc.nat(11), (id, other, d, secret, at) => {
        fc.pre(id !== other && secret !== SECRET);
        const tagOf = (a: string) => a.slice(a.indexOf('=') + 1, a.indexOf('@'));
        const signed = verpAddress(id, paths(d))!;
        const otherTag = tagOf(verpAddress(other, paths(d))!);
        expect(messageIdOfVerp(signed.replace(tagOf(signed), otherTag), paths(d))).toBeUndefined();
        expect(messageIdOfVerp(verpAddress(id, paths(d, secret))!, paths(d))).toBeUndefined();
        const tag = tagOf(signed);
        const changed = tag.slice(0, at) + (tag[at] === '0' ? '1' : '0') + tag.slice(at + 1);
        expect(messageIdOfVerp(signed.replace(tag, changed), paths(d))).toBeUndefined();
      }),
    );
  });

  it('never reads an id from an address of another domain, another local part, or one that could carry a second address', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), domain, (text, d) => {
        const id = messageIdOfVerp(text, paths(d));
        if (id !== undefined) {
          expect(text.toLowerCase().endsWith(`@${d}`)).toBe(true);
          expect(id).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
        }
      }),
    );
    const id = 'msg-1';
    const signed = verpAddress(id, paths('example.com'))!;
    expect(messageIdOfVerp(signed, paths('example.org'))).toBeUndefined();
    expect(messageIdOfVerp(signed.replace('bounces+', 'postmaster+'), paths('example.com'))).toBeUndefined();
    expect(messageIdOfVerp(signed.replace('@', '@b@'), paths('example.com'))).toBeUndefined();
    expect(messageIdOfVerp('bounces+msg-1@example.com', paths('example.com'))).toBeUndefined();
    expect(verpAddress('tēnā koe 👋🏽', paths('example.com'))).toBeUndefined();
    expect(verpAddress('a=b', paths('example.com'))).toBeUndefined();
    // A local part holds 64 octets: an id too long to sign within them gets no return path.
    expect(verpAddress('x'.repeat(44), paths('example.com'))).toBeUndefined();
    expect(verpAddress('x'.repeat(43), paths('example.com'))!.split('@')[0]!.length).toBeLessThanOrEqual(64);
  });

  it('reads the id of a return path whose internationalised domain comes in either form, as SMTP servers hand it over', () => {
    const id = 'f3b1c2a4-0000-4a55-9d1e-000000000001';
    for (const [configured, given] of [
      ['xn--kinga-fwa.nz', 'kāinga.nz'],
      ['kāinga.nz', 'xn--kinga-fwa.nz'],
      ['XN--KINGA-FWA.NZ', 'Kāinga.NZ'],
      ['例子.广告', 'xn--fsqu00a.xn--4rr70v'],
    ]) {
      const local = verpAddress(id, paths(configured))!.split('@')[0];
      expect(messageIdOfVerp(`${local}@${given}`, paths(configured))).toBe(id);
    }
    const local = verpAddress(id, paths('xn--kinga-fwa.nz'))!.split('@')[0];
    expect(messageIdOfVerp(`${local}@kainga.nz`, paths('xn--kinga-fwa.nz'))).toBeUndefined();
  });
});
