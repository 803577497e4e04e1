import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { meantField, nearMissFields } from './near-miss-fields';

const IM = ['destination', 'message', 'delivery_attempts', 'reference', 'scheduler_pipe'];
const V2 = ['id', 'destination', 'content', 'source', 'reference', 'class', 'mask', 'sms_class', 'scheduled', 'integration_id'];
const CM = ['name', 'batch', 'email', 'remove_opt_outs', 'strict_validation', 'schedule', 'content', 'mask', 'opt_out_response', 'reply_response', 'template'];
const MEMBER = ['destination', 'param1', 'param2', 'param3', 'param4', 'param5', 'param6'];
const LONG = [...IM, ...V2, ...CM].filter((f) => f.replace(/[_-]/g, '').length >= 6);

describe('the known field a client meant', () => {
  it('is found through case, underscores and hyphens, and a slip of typing', () => {
    expect(meantField('deliveryAttempts', IM)).toBe('delivery_attempts');
    expect(meantField('Delivery-Attempts', IM)).toBe('delivery_attempts');
    expect(meantField('delivery_attempt', IM)).toBe('delivery_attempts');
    expect(meantField('refrence', IM)).toBe('reference');
    expect(meantField('schedule', V2)).toBe('scheduled');
    expect(meantField('scheduuled', V2)).toBe('scheduled');
    expect(meantField('smsClass', V2)).toBe('sms_class');
    expect(meantField('integrationId', V2)).toBe('integration_id');
    expect(meantField('contnet', V2)).toBe('content');
    expect(meantField('strictValidation', CM)).toBe('strict_validation');
    expect(meantField('Param1', MEMBER)).toBe('param1');
  });

  it('is none for a field of the client’s own: another word, a plural, a suffix, another of a numbered series, a short key (review)', () => {
    for (const key of [
      'consent',
      'context',
      'reference_id',
      'references',
      'preference',
      'reference2',
      'integration',
      'customer_ref',
      'callback_url',
      'kōrero',
      '你好',
      'to',
      'ids',
    ])
      expect(meantField(key, V2), key).toBeUndefined();
    for (const key of ['emails', 'mail', 'template_id', 'names', 'templates']) expect(meantField(key, CM), key).toBeUndefined();
    for (const key of ['param7', 'param10', 'params', 'param', 'destination_2', 'first_name']) expect(meantField(key, MEMBER), key).toBeUndefined();
  });

  it('finds every known field of six letters or more again after a letter left out (but the first), two swapped, or one typed twice', () => {
    fc.assert(
      fc.property(fc.constantFrom(...LONG), fc.nat(), fc.constantFrom('drop', 'swap', 'double'), (field, at, slip) => {
        const letters = field.replace(/[_-]/g, '');
        const i = 1 + (at % (letters.length - 2));
        const key =
          slip === 'drop'
            ? letters.slice(0, i) + letters.slice(i + 1)
            : slip === 'swap'
              ? letters.slice(0, i) + letters[i + 1] + letters[i] + letters.slice(i + 2)
              : letters.slice(0, i + 1) + letters[i] + letters.slice(i + 1);
        // A last letter typed twice reads as one added at the end (a plural: `classs`), which is a name of its own.
        fc.pre(key !== letters && key !== letters + letters.at(-1));
        const meant = meantField(key, [...IM, ...V2, ...CM]);
        expect(meant, key).toBeDefined();
        expect(meant!.replace(/[_-]/g, '').length, key).toBeGreaterThanOrEqual(6);
      }),
    );
  });

  it('never takes a letter changed for another, or one added at an end, for a slip', () => {
    fc.assert(
      fc.property(fc.constantFrom(...LONG), fc.nat(), fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), fc.boolean(), (field, at, letter, end) => {
        const letters = field.replace(/[_-]/g, '');
        const i = at % letters.length;
        const key = end ? (at % 2 ? letter + letters : letters + letter) : letters.slice(0, i) + letter + letters.slice(i + 1);
        fc.pre(!([...IM, ...V2, ...CM] as string[]).some((f) => f.replace(/[_-]/g, '') === key));
        const meant = meantField(key, [field]);
        // Unless the change happens to read as a slip of the same field (a letter doubled at an end: `namee`).
        if (meant !== undefined) expect(key.length).toBe(letters.length + 1);
      }),
    );
  });

  it('is looked for among the first 100 unknown keys of an object only: a body of thousands of them is no slip, and looking cost a gateway 0.24 s each (security trial)', () => {
    const schema = { type: 'object', properties: Object.fromEntries(V2.map((f) => [f, { type: 'string' }])) };
    const body = (slipAt: number): Record<string, unknown> => {
      const b: Record<string, unknown> = { destination: '+64211234567', content: 'Kia ora Ānaru 👋🏽' };
      for (let i = 0; i < 60_000; i++) b[i === slipAt ? 'refrence' : `k${i}`] = 0;
      return b;
    };
    const path = (parts: readonly (string | number)[]) => parts.join('.');
    expect(nearMissFields({}, schema, body(99), path)).toEqual([{ field: 'refrence', description: 'is not a known field; did you mean reference?' }]);
    expect(nearMissFields({}, schema, body(100), path)).toEqual([]);
  });
});
