import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { scopedKey } from './idempotency';

/** A context as Koa builds it from raw header lines: Node joins repeated unknown headers with ", ". */
function contextWith(lines: [string, string][]): Context {
  const headers: Record<string, string> = {};
  for (const [name, value] of lines) {
    const k = name.toLowerCase();
    headers[k] = headers[k] === undefined ? value : `${headers[k]}, ${value}`;
  }
  return { headers, get: (name: string) => headers[name.toLowerCase()] ?? '', req: { rawHeaders: lines.flat() } } as unknown as Context;
}

describe('the Idempotency-Key of a request', () => {
  it('is the one header sent, scoped to its interface', () => {
    expect(scopedKey(contextWith([['Idempotency-Key', 'order-42-āe']]), 'sms_v2')).toBe('sms_v2:order-42-āe');
    expect(scopedKey(contextWith([]), 'sms_v2')).toBeUndefined();
  });

  it('is refused with 400 when two are sent, rather than merged into a key neither names (security trial)', () => {
    const err = (() => {
      try {
        scopedKey(
          contextWith([
            ['Idempotency-Key', 'a'],
            ['idempotency-key', 'b'],
          ]),
          'gateway_v1',
        );
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(HermodError);
    expect((err as HermodError).httpStatus).toBe(400);
    expect((err as HermodError).message).toBe('send one Idempotency-Key header, not 2');
  });
});
