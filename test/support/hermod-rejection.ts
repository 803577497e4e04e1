import { expect } from 'vitest';
import { HermodError } from '../../lib/errors';

/** The HermodError `p` rejects with; fails the test if it resolves or rejects with anything else. */
export async function hermodRejection(p: Promise<unknown>): Promise<HermodError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HermodError);
  return err as HermodError;
}
