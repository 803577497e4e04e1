import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashPassword, passwordHashes, verifyPassword } from './secrets';

describe('password hashes', () => {
  it('verify only the exact password, never one with zero bytes or spaces appended', async () => {
    const stored = await hashPassword('Kia ora, e hoa mā');
    expect(await verifyPassword('Kia ora, e hoa mā', stored)).toBe(true);
    for (const other of ['Kia ora, e hoa mā\0', 'Kia ora, e hoa mā\0\0', 'Kia ora, e hoa mā ', 'Kia ora, e hoa ma', '']) {
      expect(await verifyPassword(other, stored)).toBe(false);
    }
  });

  it('tell apart any password from itself with a zero-byte tail (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.integer({ min: 1, max: 3 }), async (password, zeros) => {
        const stored = await hashPassword(password);
        expect(await verifyPassword(password, stored)).toBe(true);
        expect(await verifyPassword(password + '\0'.repeat(zeros), stored)).toBe(false);
      }),
      { numRuns: 8 },
    );
  });

  it('still verify hashes of the first form, but not with a zero byte appended', async () => {
    // `scrypt$…` over the raw password, as hermod stored them before.
    const { scryptSync } = await import('node:crypto');
    const salt = Buffer.alloc(16, 7);
    const key = scryptSync('secret', salt, 32, { N: 16384, r: 8, p: 1 });
    const legacy = `scrypt$16384$8$1$${salt.toString('base64')}$${key.toString('base64')}`;
    expect(await verifyPassword('secret', legacy)).toBe(true);
    expect(await verifyPassword('secret\0', legacy)).toBe(false);
  });

  it("are computed two at a time, the others waiting in order, so checks from every gateway at once leave core's thread pool its other work (journal, DNS) (security trial)", async () => {
    const stored = await hashPassword('Kia ora, e hoa mā');
    const checks = Array.from({ length: 6 }, (_, i) => verifyPassword(i === 5 ? 'Kia ora, e hoa mā' : `guess-${i}-💥`, stored));
    expect(passwordHashes()).toEqual({ running: 2, waiting: 4 });
    expect(await Promise.all(checks)).toEqual([false, false, false, false, false, true]);
    expect(passwordHashes()).toEqual({ running: 0, waiting: 0 });
  });
});
