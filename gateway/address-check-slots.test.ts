import { describe, expect, it } from 'vitest';
import { createAddressCheckSlots, type Release } from './address-check-slots';

describe("an address's credential check slots", () => {
  it('gives a few at once, hands the next over in order as each is released, and forgets an address once idle', async () => {
    const slots = createAddressCheckSlots(2, 3);
    const first = slots.take('192.0.2.45') as Release;
    const second = slots.take('192.0.2.45') as Release;
    expect(typeof first).toBe('function');
    const order: string[] = [];
    const waiting = ['a', 'b', 'c'].map((name) => (slots.take('192.0.2.45') as Promise<Release>).then((release) => (order.push(name), release)));
    // Past the waiting allowance: refused, not queued.
    expect(slots.take('192.0.2.45')).toBeUndefined();
    // Another address is not held up.
    expect(typeof slots.take('198.51.100.7')).toBe('function');
    first();
    first(); // a second release gives nothing more
    second();
    const [a, b] = await Promise.all(waiting.slice(0, 2));
    a!();
    const c = await waiting[2]!;
    expect(order).toEqual(['a', 'b', 'c']);
    b!();
    c();
    expect(slots.size).toBe(1); // 198.51.100.7's slot is still held
  });
});
