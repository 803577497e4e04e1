import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../adapters/memory-state';
import { handsetKey } from '../domain/handset-key';
import { firstDeliveries, inboundKey } from './inbound-dedup';
import { replyAddressKey } from './reply-address';

const reply = { channel: 'sms', source: '+6421000001', destination: '4001', text: 'Kia ora, e hoa mā', carrierRef: 'umr:7' };

describe('inboundKey', () => {
  it('is the same for a redelivery and differs when any field differs, whatever the text holds', () => {
    const field = fc.string({ unit: 'grapheme', maxLength: 12 });
    const message = fc.record({ channel: fc.constantFrom('sms', 'wab'), source: field, destination: field, text: field, carrierRef: field });
    fc.assert(
      fc.property(message, message, (a, b) => {
        expect(inboundKey({ ...a })).toBe(inboundKey(a));
        const same =
          a.channel === b.channel &&
          handsetKey(a.source) === handsetKey(b.source) &&
          replyAddressKey(a.destination) === replyAddressKey(b.destination) &&
          a.text === b.text &&
          a.carrierRef === b.carrierRef;
        expect(inboundKey(a) === inboundKey(b)).toBe(same);
      }),
    );
  });

  it('is the same for a redelivery whose sender or address came with or without its plus', () => {
    expect(inboundKey({ ...reply, source: '6421000001' })).toBe(inboundKey(reply));
    expect(inboundKey({ ...reply, destination: '+6421555000' })).toBe(inboundKey({ ...reply, destination: '6421555000' }));
    expect(inboundKey({ ...reply, source: '6421000002' })).not.toBe(inboundKey(reply));
  });

  it('does not confuse fields that run into each other', () => {
    expect(inboundKey({ ...reply, source: '+64', destination: '21' })).not.toBe(inboundKey({ ...reply, source: '+642', destination: '1' }));
    expect(inboundKey({ ...reply, carrierRef: undefined })).toBe(inboundKey({ ...reply, carrierRef: '' }));
  });
});

describe('inboundKey without a carrier reference', () => {
  it('is the same for the same words while the address has sent the handset nothing newer, and new once it has', () => {
    const noRef = { ...reply, carrierRef: undefined, text: 'Āe 👍🏽' };
    expect(inboundKey(noRef, 'msg-1')).toBe(inboundKey({ ...noRef, carrierRef: '' }, 'msg-1'));
    expect(inboundKey(noRef, 'msg-2')).not.toBe(inboundKey(noRef, 'msg-1'));
    expect(inboundKey(noRef)).not.toBe(inboundKey(noRef, 'msg-1'));
  });

  it('leaves the turn out when the carrier gave a reference: its redelivery is the same message whatever was sent since', () => {
    expect(inboundKey(reply, 'msg-2')).toBe(inboundKey(reply, 'msg-1'));
    expect(inboundKey(reply, 'msg-2')).toBe(inboundKey(reply));
  });
});

describe('firstDeliveries', () => {
  it('takes the first copy of a message and drops a carrier redelivery, even within one batch', async () => {
    const state = createMemoryState();
    const key = inboundKey(reply);
    expect(
      await firstDeliveries(
        state,
        [
          { key, candidateId: 'id-1', busPosition: 'p/0/1' },
          { key, candidateId: 'id-2', busPosition: 'p/0/2' },
        ],
        60_000,
      ),
    ).toEqual(['id-1', undefined]);
    expect(await firstDeliveries(state, [{ key, candidateId: 'id-3', busPosition: 'p/1/9' }], 60_000)).toEqual([undefined]);
    expect(await firstDeliveries(state, [{ key: inboundKey({ ...reply, text: '你好' }), candidateId: 'id-4', busPosition: 'p/0/3' }], 60_000)).toEqual([
      'id-4',
    ]);
  });

  it('goes on with the same record id when the bus hands out the same record again', async () => {
    const state = createMemoryState();
    const key = inboundKey({ ...reply, text: '👍' });
    await firstDeliveries(state, [{ key, candidateId: 'first', busPosition: 'hermod.inbound.v1/0/42' }], 60_000);
    expect(await firstDeliveries(state, [{ key, candidateId: 'second', busPosition: 'hermod.inbound.v1/0/42' }], 60_000)).toEqual(['first']);
  });

  it('takes the same message again once the window has passed', async () => {
    let now = 0;
    const state = createMemoryState({ now: () => now });
    const key = inboundKey(reply);
    await firstDeliveries(state, [{ key, candidateId: 'a', busPosition: 'x/0/1' }], 1000);
    now = 1001;
    expect(await firstDeliveries(state, [{ key, candidateId: 'b', busPosition: 'x/0/2' }], 1000)).toEqual(['b']);
  });
});
