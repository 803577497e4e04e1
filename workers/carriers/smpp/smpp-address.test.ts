import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handsetKey } from '../../../core/domain/handset-key';
import { displayAddress, smppAddress, Ton } from './smpp-address';

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
