import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { meantField } from './near-miss-fields';

const IM = ['destination', 'message', 'delivery_attempts', 'reference', 'scheduler_pipe'];
const V2 = ['id', 'destination', 'content', 'source', 'reference', 'class', 'mask', 'sms_class', 'scheduled', 'integration_id'];
const MEMBER = ['destination', 'param1', 'param2', 'param3', 'param4', 'param5', 'param6'];

describe('the known field a client meant', () => {
  it('is found through case, underscores, hyphens and a slip of a letter or two', () => {
    expect(meantField('deliveryAttempts', IM)).toBe('delivery_attempts');
    expect(meantField('Delivery-Attempts', IM)).toBe('delivery_attempts');
    expect(meantField('delivery_attempt', IM)).toBe('delivery_attempts');
    expect(meantField('refrence', IM)).toBe('reference');
    expect(meantField('schedule', V2)).toBe('scheduled');
    expect(meantField('smsClass', V2)).toBe('sms_class');
    expect(meantField('integrationId', V2)).toBe('integration_id');
    expect(meantField('contnet', V2)).toBe('content');
  });

  it('is none for a field of the client’s own, another of a numbered series, or a short key', () => {
    for (const key of ['customer_ref', 'campaign', 'callback_url', 'priority', 'source_id', 'kōrero', '你好', 'to', 'ids'])
      expect(meantField(key, V2), key).toBeUndefined();
    expect(meantField('param7', MEMBER)).toBeUndefined();
    expect(meantField('param10', MEMBER)).toBeUndefined();
    expect(meantField('Param1', MEMBER)).toBe('param1');
  });

  it('finds every known field again after any one slip of a letter in it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...IM, ...V2.filter((f) => f.length >= 5)),
        fc.nat(),
        fc.constantFrom('insert', 'delete', 'substitute'),
        fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'),
        (field, at, edit, letter) => {
          const i = at % field.length;
          const slipped =
            edit === 'insert'
              ? field.slice(0, i) + letter + field.slice(i)
              : edit === 'delete'
                ? field.slice(0, i) + field.slice(i + 1)
                : field.slice(0, i) + letter + field.slice(i + 1);
          fc.pre(slipped !== field);
          const meant = meantField(slipped, [...IM, ...V2]);
          // Another known field may be as close (reference in both lists); a slip is never taken for nothing.
          expect(meant).toBeDefined();
        },
      ),
    );
  });

  it('never takes text far from every known field for one', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 12, maxLength: 40, unit: 'grapheme' }), (key) => {
        fc.pre(!/[a-z]{4}/i.test(key));
        expect(meantField(key, [...IM, ...V2])).toBeUndefined();
      }),
    );
  });
});
