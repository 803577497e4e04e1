import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handsetKey } from '../../../core/domain/handset-key';
import { displayAddress, handsetAddress, smppAddress, Ton } from './smpp-address';

describe('an address on the SMPP wire', () => {
  it('is international for +E.164 and for a number written with the 00 international prefix', () => {
    expect(smppAddress('+6421000104')).toEqual({ addr: '6421000104', ton: Ton.INTERNATIONAL, npi: 1 });
    expect(smppAddress('006421000104')).toEqual({ addr: '6421000104', ton: Ton.INTERNATIONAL, npi: 1 });
  });

  it('leaves national numbers, short codes and bare digits for the carrier to route', () => {
    expect(smppAddress('021000999')).toEqual({ addr: '021000999', ton: Ton.UNKNOWN, npi: 1 });
    expect(smppAddress('4000')).toEqual({ addr: '4000', ton: Ton.UNKNOWN, npi: 1 });
    expect(smppAddress('6421000105')).toEqual({ addr: '6421000105', ton: Ton.UNKNOWN, npi: 1 });
    expect(smppAddress('000')).toEqual({ addr: '000', ton: Ton.UNKNOWN, npi: 1 });
  });

  it('is alphanumeric for a sender name', () => {
    expect(smppAddress('Hēmi Ltd')).toMatchObject({ ton: Ton.ALPHANUMERIC });
  });

  it('reads back, for any number with a plus or a 00 prefix, as the handset opt-outs and block lists know it', () => {
    fc.assert(
      fc.property(fc.constantFrom('+', '00'), fc.integer({ min: 1, max: 9 }), fc.stringMatching(/^[0-9]{2,13}$/), (prefix, first, rest) => {
        const written = `${prefix}${first}${rest}`;
        const wire = smppAddress(written);
        expect(displayAddress(wire.addr, wire.ton)).toBe(handsetKey(written));
      }),
    );
  });
});

describe('a handset the carrier gives in its national format', () => {
  it('is read as its international number when the carrier’s country is known: the trunk prefix dropped, the country code put before', () => {
    expect(handsetAddress('0211234567', Ton.NATIONAL, '64')).toBe('+64211234567');
    expect(handsetAddress('211234567', Ton.NATIONAL, '64')).toBe('+64211234567');
    expect(handsetAddress('0211234567', Ton.UNKNOWN, '64')).toBe('+64211234567');
    expect(handsetAddress('07700900123', Ton.NATIONAL, '44')).toBe('+447700900123');
    expect(handsetAddress('0612345678', Ton.UNKNOWN, '36')).toBe('+3612345678');
  });

  it('keeps a leading 0 where the country dials it from abroad too (Italy has no trunk prefix)', () => {
    expect(handsetAddress('0612345678', Ton.NATIONAL, '39')).toBe('+390612345678');
    expect(handsetAddress('0612345678', Ton.UNKNOWN, '39')).toBe('0612345678');
  });

  it('leaves international numbers, the 00 prefix, bare digits of unknown type and sender names as before', () => {
    expect(handsetAddress('64211234567', Ton.INTERNATIONAL, '64')).toBe('+64211234567');
    expect(handsetAddress('0064211234567', Ton.UNKNOWN, '64')).toBe('0064211234567');
    expect(handsetAddress('64211234567', Ton.UNKNOWN, '64')).toBe('64211234567');
    expect(handsetAddress('Kāinga', Ton.ALPHANUMERIC, '64')).toBe('Kāinga');
  });

  it('leaves a short code flagged national as it is', () => {
    expect(handsetAddress('4000', Ton.NATIONAL, '64')).toBe('4000');
    expect(handsetAddress('2468', Ton.NATIONAL, '64')).toBe('2468');
    expect(handsetAddress('60300', Ton.NATIONAL, '44')).toBe('60300');
  });

  it('reads a national number that starts with the digits of its country code as national (Kazakh, Indian, Italian and Brazilian mobiles)', () => {
    expect(handsetAddress('7011234567', Ton.NATIONAL, '7')).toBe('+77011234567');
    expect(handsetAddress('9123456789', Ton.NATIONAL, '91')).toBe('+919123456789');
    expect(handsetAddress('3921234567', Ton.NATIONAL, '39')).toBe('+393921234567');
    expect(handsetAddress('55991234567', Ton.NATIONAL, '55')).toBe('+5555991234567');
    expect(handsetAddress('2125551234', Ton.NATIONAL, '1')).toBe('+12125551234');
  });

  it('leaves bare digits of unknown type that do not start with 0 as the international number they are, whatever trunk prefix the country has', () => {
    expect(handsetAddress('84912345678', Ton.UNKNOWN, '7')).toBe('84912345678');
    expect(handsetAddress('81312345678', Ton.UNKNOWN, '7')).toBe('81312345678');
    expect(handsetAddress('89121234567', Ton.NATIONAL, '7')).toBe('+79121234567');
  });

  it('stays as the carrier gave it when no country is set, as before', () => {
    expect(handsetAddress('0211234567', Ton.NATIONAL, undefined)).toBe('0211234567');
    expect(handsetAddress('64211234567', Ton.INTERNATIONAL, undefined)).toBe('+64211234567');
  });

  it('is the handset the same number sent to from abroad is, for any national number of a trunk-0 country', () => {
    fc.assert(
      fc.property(fc.constantFrom('64', '44', '61', '49', '33', '91'), fc.integer({ min: 1, max: 9 }), fc.stringMatching(/^[0-9]{6,9}$/), (cc, first, rest) => {
        const international = `+${cc}${first}${rest}`;
        expect(handsetAddress(`0${first}${rest}`, Ton.NATIONAL, cc)).toBe(international);
        expect(handsetAddress(`0${first}${rest}`, Ton.UNKNOWN, cc)).toBe(international);
        expect(handsetAddress(`${first}${rest}`, Ton.NATIONAL, cc)).toBe(international);
        expect(handsetKey(handsetAddress(`0${first}${rest}`, Ton.NATIONAL, cc))).toBe(handsetKey(international));
      }),
    );
  });
});
