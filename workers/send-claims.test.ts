import fc from 'fast-check';
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

/** Claims taken one message at a time, the workers' calls interleaved, as several processes' pipelines reach Redis. */
function interleavedState() {
  const state = createMemoryState();
  const interleaved: HotState = {
    ...state,
    claimSends: async (claims, ttlMs) => {
      const taken: boolean[] = [];
      for (const c of claims) {
        await new Promise((r) => setImmediate(r));
        taken.push(...(await state.claimSends([c], ttlMs)));
      }
      return taken;
    },
  };
  return { state, interleaved };
}

/** Workers' batches run at once, each taking, sending what it may (its carrier id stored) and letting go: who sent what, or 'stuck'. */
async function runBatches(batches: string[][]): Promise<Map<string, number> | 'stuck'> {
  const { state, interleaved } = interleavedState();
  const workers = batches.map(() => createSendClaims(interleaved, () => false));
  const sent = new Map<string, number>();
  const all = Promise.all(
    batches.map(async (ids, w) => {
      const mine = await workers[w]!.take(ids);
      const sending = ids.filter((_, i) => mine[i]);
      for (const id of sending) {
        sent.set(id, (sent.get(id) ?? 0) + 1);
        await state.putCarrierIds([{ carrierId: `smsc-${id}`, messageId: id }]);
      }
      await workers[w]!.release(sending);
    }),
  );
  const outcome = await Promise.race([all.then(() => 'ended' as const), new Promise<'stuck'>((r) => setTimeout(() => r('stuck'), 5_000))]);
  for (const w of workers) w.stop();
  return outcome === 'stuck' ? 'stuck' : sent;
}

describe('send claims of workers handed overlapping batches', () => {
  it('never leaves two waiting on each other: each message is sent by one of them, and both batches end', async () => {
    const sent = await runBatches([
      ['karere-1', 'karere-2', 'karere-3'],
      ['karere-3', 'karere-2', 'karere-1'],
    ]);
    expect(sent).not.toBe('stuck');
    for (const id of ['karere-1', 'karere-2', 'karere-3']) expect((sent as Map<string, number>).get(id), id).toBe(1);
  });

  it('ends every batch and sends each message once, however three workers’ batches overlap and are ordered', async () => {
    const ids = ['kupu-ā', 'kupu-b', 'kupu-c', 'kupu-d', 'kupu-ē', 'kupu-f'];
    const batch = fc.shuffledSubarray(ids, { minLength: 1 }).chain((sub) => fc.shuffledSubarray(sub, { minLength: sub.length, maxLength: sub.length }));
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 2, maxLength: 3 }), async (batches) => {
        const sent = await runBatches(batches);
        if (sent === 'stuck') return false;
        const wanted = new Set(batches.flat());
        return [...wanted].every((id) => sent.get(id) === 1);
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});
