import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFlushBuffer } from './flush-buffer';

describe('the flush buffer', () => {
  it('joins the pieces it is given, byte for byte, whatever they hold', () => {
    const join = createFlushBuffer();
    fc.assert(
      fc.property(fc.array(fc.array(fc.string({ unit: 'binary' }), { maxLength: 5 }), { maxLength: 6 }), (flushes) => {
        for (const texts of flushes) {
          const pieces = texts.map((t) => Buffer.from(t, 'utf8'));
          expect(join(pieces).equals(Buffer.concat(pieces))).toBe(true);
        }
      }),
    );
  });

  it('writes each flush into the memory of the one before when it fits, so a flush takes no fresh pages', () => {
    const join = createFlushBuffer();
    const first = join([Buffer.alloc(300_000, 'a'), Buffer.alloc(300_000, 'b')]);
    const second = join([Buffer.alloc(200_000, 'c')]);
    expect(second.buffer).toBe(first.buffer);
    expect(second.length).toBe(200_000);
    expect(second.every((b) => b === 0x63)).toBe(true);
  });

  it('keeps no memory for a flush larger than it keeps, and none for a small one', () => {
    const join = createFlushBuffer({ keepAtMostBytes: 1_000_000 });
    const huge = join([Buffer.alloc(700_000, 'a'), Buffer.alloc(700_000, 'b')]);
    const next = join([Buffer.alloc(600_000, 'c')]);
    expect(next.buffer).not.toBe(huge.buffer);
    // Small joins come from Node's own pool, as Buffer.concat's do.
    const small = join([Buffer.from('x'), Buffer.from('y')]);
    expect(small.toString()).toBe('xy');
  });
});
