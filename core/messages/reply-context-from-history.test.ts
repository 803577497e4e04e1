import { describe, expect, it } from 'vitest';
import type { SendToHandset } from '../ports/message-history';
import { contextOfReply, createReplyContextFromHistory, writtenForms } from './reply-context-from-history';
import { routeReply } from './reply-router';

const send = (messageId: string, applicationId: string, source: string, acceptedAt: number): SendToHandset => ({
  messageId,
  applicationId,
  source,
  mask: '',
  acceptedAt,
});

describe('a reply routed from history when hot state forgot its handset', () => {
  it('goes to the application that last messaged the handset from the address it replied to', async () => {
    const asked: string[][] = [];
    const history = {
      lastSendsTo: async (handsets: readonly string[]) => {
        asked.push([...handsets]);
        return [send('m-3', 'globex', '4200', 3), send('m-2', 'acme', '4100', 2), send('m-1', 'globex', '4100', 1)];
      },
    };
    const contexts = createReplyContextFromHistory(history);
    const context = (await contexts.contextOf('6423000001', '4100'))!;
    expect(routeReply(context, undefined)).toEqual({ applicationId: 'acme', replyTo: 'm-2', rule: 'last-message-from-address' });
    // Every way the number may have been written to it.
    expect(asked[0]).toEqual(expect.arrayContaining(['+6423000001', '6423000001', '006423000001']));
  });

  it('asks history once for a number it never messaged, not for every reply from it', async () => {
    let queries = 0;
    const contexts = createReplyContextFromHistory({ lastSendsTo: async () => (queries++, []) });
    expect(await contexts.contextOf('+6423000002', '4100')).toBeUndefined();
    expect(await contexts.contextOf('6423000002', 'HERMOD')).toBeUndefined();
    expect(queries).toBe(1);
  });

  it('knows the ways a number is written, and leaves anything else as it is', () => {
    expect(writtenForms('+6421999001')).toEqual(['+6421999001', '6421999001', '006421999001']);
    expect(writtenForms('ana@whānau.nz')).toEqual(['ana@whānau.nz']);
  });

  it('goes by history where hot state knows the address (another application sent from it since) but not this handset', async () => {
    const history = { lastSendsTo: async () => [send('m-acme', 'acme', '5000', 1)] };
    const contexts = createReplyContextFromHistory(history);
    // After a restart, globex sent from 5000 to someone else: hot state knows 5000's sender, nothing of this handset.
    const known = { sendersOfAddress: ['globex'] };
    const context = await contextOfReply(known, () => contexts.contextOf('+6421000801', '5000'));
    expect(routeReply(context, undefined)).toEqual({ applicationId: 'acme', replyTo: 'm-acme', rule: 'last-message-from-address' });
  });

  it('goes by history for the last message from the address where hot state knows only a later message to the handset from elsewhere', async () => {
    // Before a restart initech messaged the handset on the shared WhatsApp number; after it, recovery handed its IM message over again.
    const history = { lastSendsTo: async () => [send('m-initech', 'initech', '100000000000001', 1)] };
    const contexts = createReplyContextFromHistory(history);
    const known = { lastToHandset: { applicationId: 'initech', messageId: 'im-initech' }, sendersOfAddress: [] };
    const context = await contextOfReply(known, () => contexts.contextOf('+6421000802', '100000000000001'));
    expect(context.lastToHandset).toEqual({ applicationId: 'initech', messageId: 'im-initech' });
    expect(routeReply(context, 'acme')).toEqual({ applicationId: 'initech', replyTo: 'm-initech', rule: 'last-message-from-address' });
  });

  it('does not ask history when hot state knows the last message from the address', async () => {
    let queries = 0;
    const known = {
      lastFromAddress: { applicationId: 'acme', messageId: 'm-1' },
      lastToHandset: { applicationId: 'acme', messageId: 'm-1' },
      sendersOfAddress: ['acme'],
    };
    expect(await contextOfReply(known, async () => (queries++, undefined))).toBe(known);
    expect(queries).toBe(0);
  });
});
