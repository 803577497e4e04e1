import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { checkDestination, destinationProblem } from './destination-problem';
import { nanpAreaCodeProblem } from './nanp-area-code';

const digits = (min: number, max: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));
/** What follows +1 when its area code starts with 0 or 1: up to the 14 digits E.164 leaves after the country code. */
const areaCodeFrom0or1 = fc.tuple(fc.constantFrom('0', '1'), digits(0, 13)).map(([first, rest]) => first + rest);
/** A North American number's 10 digits, its area code (NPA) from 2 to 9; the exchange code (NXX) anything, as +1 555 000 0001 is. */
const tenDigitsFrom2to9 = fc.tuple(fc.constantFrom(...'23456789'), digits(9, 9)).map(([first, rest]) => first + rest);

describe('a North American area code starting with 0 or 1 (property)', () => {
  it('refuses every +1 number whose area code starts with 0 or 1, written with + or 00, or as bare digits where the country code comes first', () => {
    fc.assert(
      fc.property(areaCodeFrom0or1, (national) => {
        expect(nanpAreaCodeProblem(`1${national}`)).toBeDefined();
        for (const written of [`+1${national}`, `001${national}`, `1${national}`]) {
          expect(() => checkDestination(written, 'destination')).toThrow(HermodError);
        }
      }),
    );
  });

  it('never refuses a +1 number of 10 digits whose area code starts with 2 to 9, whatever its exchange code', () => {
    fc.assert(
      fc.property(tenDigitsFrom2to9, (national) => {
        expect(nanpAreaCodeProblem(`1${national}`)).toBeUndefined();
        expect(destinationProblem(`+1${national}`)).toBeUndefined();
      }),
    );
  });

  it('is looked for after the country code 1 only', () => {
    fc.assert(
      fc.property(fc.constantFrom(...'23456789'), fc.constantFrom('0', '1'), digits(4, 12), (cc, first, rest) => {
        expect(nanpAreaCodeProblem(`${cc}${first}${rest}`)).toBeUndefined();
      }),
    );
  });
});

describe('a North American area code starting with 0 or 1', () => {
  it.each([
    ['an area code starting with 0', '+10555550123', /^has the area code 055 after the country code \+1; North American area codes start with 2 to 9/],
    ['an area code starting with 1, too short to be 1 dialled before the area code', '+11234567890', /^has the area code 123 after the country code \+1; /],
    ['the international prefix 00', '0010555550123', /^has the area code 055 /],
  ])('is refused, naming the area code: %s', (_what, written, problem) => {
    expect(destinationProblem(written)).toMatch(problem);
  });

  it('names no area code where the digits after +1 are not ten, since which three are the area code is not known', () => {
    // +1 1 055 555 0123: the 1 dialled before an area code that starts with 0; "area code 105" would be wrong.
    expect(destinationProblem('+110555550123')).toBe(
      'has 1 right after the country code +1, where the area code begins; North American area codes start with 2 to 9, so no carrier would take the number',
    );
    expect(destinationProblem('+10')).toMatch(/^has 0 right after the country code \+1, where the area code begins; /);
    expect(destinationProblem('+100')).toMatch(/^has 0 right after the country code \+1, where the area code begins; /);
  });

  it('leaves 1 dialled before a whole number to the trunk prefix refusal, which names the number meant', () => {
    expect(destinationProblem('+112125550123')).toMatch(/^has the trunk prefix 1 after the country code \+1; .* the number from abroad is \+12125550123$/);
  });

  it('leaves alone the exchange code: +1 555 000 0001 and +1 212 100 0000 are sent', () => {
    expect(destinationProblem('+15550000001')).toBeUndefined();
    expect(destinationProblem('+12121000000')).toBeUndefined();
  });

  it('keeps bare digits in a Campaign Manager member, where they are a national number', () => {
    expect(destinationProblem('10555550123', 'national')).toBeUndefined();
    expect(destinationProblem('0010555550123', 'national')).toMatch(/^has the area code 055 /);
  });
});

describe('a destination that cannot be sent as written', () => {
  it('is refused only with a 400 naming the field, whatever the value, and + and 00 read alike', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          digits(0, 16),
          fc.string(),
          digits(3, 14).map((d) => `+${d}`),
        ),
        (value) => {
          let thrown: unknown;
          try {
            checkDestination(value, 'destination');
          } catch (err) {
            thrown = err;
          }
          if (thrown === undefined) return;
          expect(thrown).toBeInstanceOf(HermodError);
          expect((thrown as HermodError).code).toBe('invalid_attrib');
          expect((thrown as HermodError).fields).toEqual([
            {
              field: 'destination',
              description: expect.stringMatching(/^has (the trunk prefix |the 15 |the area code |[01] right after the country code \+1)/),
            },
          ]);
          expect((thrown as HermodError).message).toBe(`destination ${(thrown as HermodError).fields[0]!.description}`);
          if (value.startsWith('+')) expect(destinationProblem(`00${value.slice(1)}`)).toBe(destinationProblem(value));
        },
      ),
    );
  });

  it('is looked for in bare digits only where the interface takes the country code first', () => {
    expect(destinationProblem('640215550123')).toMatch(/\+64215550123$/);
    expect(destinationProblem('640215550123', 'national')).toBeUndefined();
    expect(destinationProblem('00640215550123', 'national')).toMatch(/\+64215550123$/);
    expect(destinationProblem('+64 021 555 0123')).toBeUndefined();
  });
});
