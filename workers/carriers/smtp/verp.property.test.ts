import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageIdOfVerp, verpAddress } from './verp';

const domain = fc.constantFrom('example.com', 'bounces.example.org', 'localhost', 'mail.hermod.example');

describe('VERP return paths (property)', () => {
  it('reads back the message id of any return path it wrote, whatever the case of the domain', () => {
    fc.assert(
      fc.property(fc.uuid(), domain, fc.boolean(), (id, d, upper) => {
        const address = verpAddress(id, d)!;
        expect(messageIdOfVerp(upper ? address.replace(/@.*/, (m) => m.toUpperCase()) : address, d)).toBe(id);
      }),
    );
  });

  it('never reads an id from an address of another domain, another local part, or one that could carry a second address', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), domain, (text, d) => {
        const id = messageIdOfVerp(text, d);
        if (id !== undefined) {
          expect(text.toLowerCase().endsWith(`@${d}`)).toBe(true);
          expect(id).toMatch(/^[A-Za-z0-9][A-Za-z0-9._=-]*$/);
        }
      }),
    );
    expect(messageIdOfVerp('bounces+msg-1@example.org', 'example.com')).toBeUndefined();
    expect(messageIdOfVerp('postmaster+msg-1@example.com', 'example.com')).toBeUndefined();
    expect(messageIdOfVerp('bounces+a@b@example.com', 'example.com')).toBeUndefined();
    expect(verpAddress('tēnā koe 👋🏽', 'example.com')).toBeUndefined();
  });

  it('reads the id of a return path whose internationalised domain comes in either form, as SMTP servers hand it over', () => {
    const id = 'f3b1c2a4-0000-4a55-9d1e-000000000001';
    for (const [configured, given] of [
      ['xn--kinga-fwa.nz', 'kāinga.nz'],
      ['kāinga.nz', 'xn--kinga-fwa.nz'],
      ['XN--KINGA-FWA.NZ', 'Kāinga.NZ'],
      ['例子.广告', 'xn--fsqu00a.xn--4rr70v'],
    ]) {
      expect(messageIdOfVerp(`bounces+${id}@${given}`, configured)).toBe(id);
    }
    expect(messageIdOfVerp(`bounces+${id}@kainga.nz`, 'xn--kinga-fwa.nz')).toBeUndefined();
  });
});
