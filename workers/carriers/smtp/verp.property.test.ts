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
});
