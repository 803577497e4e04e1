import { describe, expect, it } from 'vitest';
import type { ReplyRoute } from './reply-router';
import { startRoute } from './start-route';

/** Opt-outs as hot state holds them: "application handset". */
const optedOut = (...pairs: string[]) => {
  const set = new Set(pairs);
  return async (asked: readonly { applicationId: string; handset: string }[]) => asked.map((p) => set.has(`${p.applicationId} ${p.handset}`));
};
const toAcme: ReplyRoute = { applicationId: 'acme', replyTo: 'm-acme', rule: 'last-message-from-address' };
const handset = '+6421500020';

describe('where a START goes', () => {
  it('stays with the application the rules chose when the handset is opted out of it', async () => {
    expect(await startRoute(toAcme, { sendersOfAddress: ['acme', 'beta'] }, undefined, handset, optedOut(`acme ${handset}`, `beta ${handset}`))).toBe(toAcme);
  });

  it('goes to a sender of the address the handset is opted out of when the chosen one has it opted in', async () => {
    expect(await startRoute(toAcme, { sendersOfAddress: ['acme', 'beta', 'gamma'] }, undefined, handset, optedOut(`gamma ${handset}`))).toEqual({
      applicationId: 'gamma',
      replyTo: '',
      rule: 'opted-out-from-address',
    });
  });

  it('goes to the application that claimed the address, when the handset is opted out of it', async () => {
    const route = await startRoute(toAcme, { sendersOfAddress: ['acme'] }, 'beta', handset, optedOut(`beta ${handset}`));
    expect(route).toMatchObject({ applicationId: 'beta', rule: 'opted-out-from-address' });
  });

  it('finds the application for a START that matched none', async () => {
    const unmatched: ReplyRoute = { applicationId: '', replyTo: '', rule: 'unmatched' };
    expect(await startRoute(unmatched, { sendersOfAddress: ['acme', 'beta'] }, undefined, handset, optedOut(`beta ${handset}`))).toMatchObject({
      applicationId: 'beta',
    });
  });

  it('leaves the route as it is when the handset is opted out of nobody there, without asking when nobody else sends from it', async () => {
    expect(await startRoute(toAcme, { sendersOfAddress: ['acme', 'beta'] }, undefined, handset, optedOut())).toBe(toAcme);
    const never = async (): Promise<boolean[]> => {
      throw new Error('asked');
    };
    expect(await startRoute(toAcme, { sendersOfAddress: ['acme'] }, undefined, handset, never)).toBe(toAcme);
  });
});
