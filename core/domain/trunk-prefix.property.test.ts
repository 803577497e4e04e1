import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findTrunkPrefix, trunkPrefixProblem } from './trunk-prefix';

const digits = (min: number, max: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));
/** A national significant number as dialled from abroad: never starting with 0 where the trunk prefix is 0. */
const significant = fc.tuple(fc.constantFrom(...'123456789'), digits(5, 10)).map(([first, rest]) => first + rest);
/** Country codes whose trunk prefix is 0: New Zealand, the UK, Germany, France, Australia, Japan, Ireland, South Africa, Brazil. */
const TRUNK_ZERO = ['64', '44', '49', '33', '61', '81', '353', '27', '55'];
/** Countries without a trunk prefix, where a leading 0 is part of the number: Italy, San Marino, Côte d'Ivoire, Gabon; and Spain, Norway. */
const NO_TRUNK = ['39', '378', '225', '241', '34', '47'];

describe('a national trunk prefix after the country code (property)', () => {
  it('is found after every country code whose plan has the trunk prefix 0, and the number meant is the one without it', () => {
    fc.assert(
      fc.property(fc.constantFrom(...TRUNK_ZERO), significant, (cc, nsn) => {
        expect(findTrunkPrefix(`${cc}0${nsn}`)).toEqual({ countryCode: cc, trunk: '0', name: 'the trunk prefix 0', international: `+${cc}${nsn}` });
        expect(findTrunkPrefix(`${cc}${nsn}`)).toBeUndefined();
      }),
    );
  });

  it('is never found where the country has no trunk prefix, so a leading 0 there is kept and sent', () => {
    fc.assert(
      fc.property(fc.constantFrom(...NO_TRUNK), digits(6, 11), (cc, national) => {
        expect(findTrunkPrefix(`${cc}${national}`)).toBeUndefined();
        expect(trunkPrefixProblem(`${cc}0${national}`)).toBeUndefined();
      }),
    );
  });

  it('gives a number meant in which it is found no more: one refusal says all there is to change', () => {
    /** Numbers of the plans with rules of their own, written with what looks like their prefixes. */
    const prefixed = fc
      .tuple(
        fc.constantFrom('1', '7', '36', '52', '54', '55', '250', '370', '375', '692', '993', '64'),
        fc.constantFrom('0', '00', '01', '044', '06', '8', '80', '9', '90', '021', '1', '11'),
        digits(6, 12),
      )
      .map(([cc, prefix, rest]) => cc + prefix + rest);
    fc.assert(
      fc.property(fc.oneof(digits(4, 15), prefixed), (number) => {
        const found = findTrunkPrefix(number);
        if (found?.international === undefined) return;
        expect(`+${number}`.length).toBeGreaterThan(found.international.length);
        expect(findTrunkPrefix(found.international.slice(1))).toBeUndefined();
      }),
    );
  });
});

describe('a national trunk prefix after the country code', () => {
  it.each([
    ['New Zealand', '640215550123', '0', '+64215550123'],
    ['the United Kingdom, +44 (0)20', '4402079460000', '0', '+442079460000'],
    ['Germany', '4901701234567', '0', '+491701234567'],
    ['Russia, 8 before a mobile', '789123456789', '8', '+79123456789'],
    ['Russia, 8 before St Petersburg', '788121234567', '8', '+78121234567'],
    ['Kazakhstan', '787012345678', '8', '+77012345678'],
    ['Hungary, 06', '3606301234567', '06', '+36301234567'],
    ['Belarus, 8 0 before an area code', '37580171234567', '80', '+375171234567'],
    ['Rwanda, 0 before a mobile', '2500788123456', '0', '+250788123456'],
    ['the United States, 1 before the area code', '112125550123', '1', '+12125550123'],
    ['Mexico, 01 before a long-distance number', '52015512345678', '01', '+525512345678'],
    ['Mexico, 044 before a mobile', '520445512345678', '044', '+525512345678'],
    ['Argentina, 0 before a Buenos Aires line', '5401143211234', '0', '+541143211234'],
    ['Argentina, 0 after the 9 of a mobile', '54901112345678', '0', '+5491112345678'],
    ['Brazil, 0 before the area code', '55011912345678', '0', '+5511912345678'],
    ['Brazil, 0 and the carrier code 21 before the area code', '550211191234567', '021', '+551191234567'],
    ['Lithuania, 8 before a mobile', '370861234567', '8', '+37061234567'],
    ['the Marshall Islands, 1 before a seven-digit number', '69212351234', '1', '+6922351234'],
  ])('is found in %s', (_where, number, trunk, international) => {
    expect(findTrunkPrefix(number)).toMatchObject({ trunk, international });
  });

  it.each([
    ['Italy, whose leading 0 is dialled from abroad', '390612345678'],
    ['Russia, St Petersburg', '78121234567'],
    ['Russia, a freephone number', '78005553535'],
    ['Japan, a 00 freephone number', '81003712345678'],
    ['Rwanda, an 06 number', '25006123456'],
    ['Belarus, a freephone number', '375800123456'],
    ['Belarus, an international 00', '375001234567'],
    ['Mexico, a mobile with the 1 WhatsApp ids keep', '5215512345678'],
    ['Lithuania, a freephone number', '37080012345'],
    ['Argentina, a Buenos Aires mobile as dialled from abroad', '5491112345678'],
    ['the United States, 1 before 9 digits, no number: its area code 123 is refused instead', '11234567890'],
  ])('is not found in a number that starts as one would: %s', (_where, number) => {
    expect(findTrunkPrefix(number)).toBeUndefined();
  });

  it.each([
    [
      'Argentina, a mobile with 15 after the area code (011 15 1234 5678)',
      '540111512345678',
      /^has the trunk prefix 0 after the country code \+54; .*\+54 9.*without .*15/,
    ],
    ['Mexico, a 0 before a number of no length the plan has', '5201234', /^has the trunk prefix 0 after the country code \+52; /],
    [
      'the Marshall Islands, a 1 before a number of no length the plan has',
      '692123512345',
      /^has the trunk prefix 1 after the country code \+692; .*: write the number as dialled from abroad, \+692 and the 7 digits of the number$/,
    ],
    [
      'Argentina, a mobile with 15 after the area code but no 0 (11 15 1234 5678)',
      '54111512345678',
      /^has the 15 of a mobile dialled at home after the country code \+54; .*\+54 9/,
    ],
    ['Argentina, the same after the 9 (+54 9 11 15 1234 5678)', '549111512345678', /^has the 15 of a mobile dialled at home after the country code \+54; /],
  ])('is found in %s, and the refusal says how to write it rather than name a number it cannot be sure of', (_where, number, problem) => {
    expect(findTrunkPrefix(number)?.international).toBeUndefined();
    expect(trunkPrefixProblem(number)).toMatch(problem);
  });
});
