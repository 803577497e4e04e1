import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../core/adapters/memory-state';
import type { HotState } from '../core/ports/state';
import { HermodError } from '../lib/errors';
import { createSendClaims } from './send-claims';

describe('send claims', () => {
  it('gives up the claims it took when hot state fails before it could tell whether they still want sending', async () => {
    const state = createMemoryState();
    let failReads = true;
    const flaky: HotState = {
      ...state,
      wereSubmitted: async (ids) => {
        if (failReads) throw new HermodError('unavailable', 'reading submit markers: Redis did not answer', { retryable: true });
        return state.wereSubmitted(ids);
      },
    };
    const claims = createSendClaims(flaky, () => false);
    await expect(claims.take(['karere-1', 'karere-2'])).rejects.toThrow(/did not answer/);
    claims.stop();
    // Another worker, handed the same jobs, can claim them now: they were not held on until they ran out.
    failReads = false;
    expect(
      await state.claimSends(
        [
          { messageId: 'karere-1', token: 'tētahi atu' },
          { messageId: 'karere-2', token: 'tētahi atu' },
        ],
        15_000,
      ),
    ).toEqual([true, true]);
  });
});
