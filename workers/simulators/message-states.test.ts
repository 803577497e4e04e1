import { describe, expect, it } from 'vitest';
import { MESSAGE_STATE_BY_STATE, MessageState, type ReceiptState } from '../carriers/smpp/delivery-receipt';
import { MessageStates } from './message-states';

describe('MessageStates', () => {
  it('is en route until the final time, then the outcome’s state with its error code and time', () => {
    const states = new MessageStates(10);
    const at = Date.now() + 1000;
    states.remember(1, 'undeliverable', 1, at, 'SHOP');
    expect(states.lookup(1, at - 1)).toEqual({ messageState: MessageState.ENROUTE, finalAt: undefined, errorCode: 0, source: 'SHOP' });
    expect(states.lookup(1, at)).toEqual({ messageState: MessageState.UNDELIVERABLE, finalAt: at, errorCode: 1, source: 'SHOP' });
  });

  it('answers a rejected message REJECTED (8), past the seven states three bits hold, with its error code intact', () => {
    const states = new MessageStates(10);
    states.remember(1, 'rejected', 0, 0, 'SHOP');
    states.remember(2, 'rejected', 255, 0, 'SHOP');
    expect(states.lookup(1)).toMatchObject({ messageState: MessageState.REJECTED, errorCode: 0 });
    expect(states.lookup(2)).toMatchObject({ messageState: MessageState.REJECTED, errorCode: 255 });
  });

  it('gives back every final state a receipt can carry, each with the largest error code, at its final time', () => {
    const states = new MessageStates(10);
    const at = Date.now() + 1000;
    const all = Object.entries(MESSAGE_STATE_BY_STATE) as [ReceiptState, number][];
    for (const [i, [state]] of all.entries()) states.remember(i + 1, state, 255, at, 'SHOP');
    expect(all.map((_, i) => states.lookup(i + 1, at))).toEqual(all.map(([, messageState]) => ({ messageState, finalAt: at, errorCode: 255, source: 'SHOP' })));
  });

  it('forgets the oldest past its capacity, across chunks, and knows nothing of numbers never given', () => {
    const states = new MessageStates(40_000);
    for (let n = 1; n <= 50_000; n++) states.remember(n, 'delivered', 0, 0, 'SHOP');
    expect(states.lookup(10_000)).toBeUndefined();
    expect(states.lookup(10_001)?.messageState).toBe(MessageState.DELIVERED);
    expect(states.lookup(50_000)?.messageState).toBe(MessageState.DELIVERED);
    expect(states.lookup(50_001)).toBeUndefined();
    expect(states.lookup(-1)).toBeUndefined();
  });

  it('keeps every source, past the 65,535 it interns, and lets go of those it forgets', () => {
    const states = new MessageStates(70_000);
    for (let n = 1; n <= 140_000; n++) states.remember(n, 'expired', 27, 0, `+6421${n}`);
    expect(states.lookup(70_001)).toMatchObject({ source: '+642170001', messageState: MessageState.EXPIRED, errorCode: 27 });
    expect(states.lookup(140_000)?.source).toBe('+6421140000');
    expect((states as unknown as { overflow: Map<number, string> }).overflow.size).toBe(70_000);
  });
});
