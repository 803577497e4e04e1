import { describe, expect, it } from 'vitest';
import { createValidator } from '../http/validator';
import { createInvalidMembers } from './invalid-members';
import { CAMPAIGN_MANAGER_SCHEMAS } from './schemas';

const validate = createValidator(CAMPAIGN_MANAGER_SCHEMAS);

/** The answer's words for these members, as an import checks them. */
function said(members: unknown[], options: { dropped?: boolean } = {}): string {
  const invalid = createInvalidMembers();
  members.forEach((m, i) => {
    try {
      validate('Member', m);
    } catch (err) {
      invalid.add(i, m, err);
    }
  });
  return invalid.describe(options);
}

describe('the invalid members of an import', () => {
  it('are each named once, by the first problem in words, with the value as sent', () => {
    expect(said([{ destination: '+64 21 abc', param1: '' }, { destination: '' }, { param1: 'Ānaru' }, { destination: 6421 }])).toBe(
      '4 invalid members: members[0].destination "+64 21 abc" is not a phone number: + and 3 to 15 digits (the country code first), or 3 to 15 digits without it, with no spaces, dashes, brackets or letters (e.g. +64211234567); ' +
        'members[1].destination "" must not be empty; members[2].destination is required; members[3].destination 6421 must be string',
    );
  });

  it('quote a long value only in part, and never a whole object', () => {
    const long = `${'Kia ora 👋🏽 '.repeat(10)}`;
    expect(said([{ destination: '+6421000001', param2: long }], { dropped: true })).toBe(
      `1 invalid member dropped: members[0].param2 "${Array.from(long).slice(0, 24).join('')}…" must NOT have more than 50 characters`,
    );
    expect(said([[{ destination: '+6421000001' }]])).toBe('1 invalid member: members[0] must be object');
  });

  it('name the first ten, and count every one after them', () => {
    const members = Array.from({ length: 1015 }, (_, i) => ({ destination: i < 1000 ? `+64210${String(i).padStart(5, '0')}` : 'none' }));
    const words = said(members, { dropped: true });
    expect(words).toMatch(/^15 invalid members dropped: members\[1000\]\.destination "none" is not a phone number/);
    expect(words.match(/members\[\d+\]/g)).toHaveLength(10);
    expect(words).toMatch(/members\[1009\][^;]*; … and 5 more$/);
  });
});
