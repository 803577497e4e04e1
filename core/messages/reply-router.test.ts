import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReplyContext } from '../ports/state';
import { routeReply } from './reply-router';

const none: ReplyContext = { sendersOfAddress: [] };

describe('routeReply', () => {
  it('gives a reply that quotes a message to the application that sent it, over every other rule', () => {
    const context: ReplyContext = {
      lastToHandset: { applicationId: 'b', messageId: 'mb' },
      lastFromAddress: { applicationId: 'b', messageId: 'mb' },
      sendersOfAddress: ['a', 'b', 'c'],
    };
    const quoted = { applicationId: 'c', messageId: 'mc' };
    expect(routeReply(context, 'a', quoted)).toEqual({ applicationId: 'c', replyTo: 'mc', rule: 'quoted-message' });
    expect(routeReply(none, undefined, quoted)).toEqual({ applicationId: 'c', replyTo: 'mc', rule: 'quoted-message' });
  });

  it('gives a reply to the application that claimed the address, whoever messaged the handset last from elsewhere', () => {
    const context: ReplyContext = {
      lastToHandset: { applicationId: 'b', messageId: 'mb' },
      lastFromAddress: { applicationId: 'a', messageId: 'ma' },
      sendersOfAddress: ['a', 'b'],
    };
    expect(routeReply(context, 'a')).toEqual({ applicationId: 'a', replyTo: 'ma', rule: 'claimed-address' });
    expect(routeReply({ lastToHandset: { applicationId: 'b', messageId: 'mb' }, sendersOfAddress: ['b'] }, 'a')).toEqual({
      applicationId: 'a',
      replyTo: '',
      rule: 'claimed-address',
    });
  });

  it('gives a reply to the application whose message from the claimed address it answers (a shared WhatsApp number, a send before the claim)', () => {
    const context: ReplyContext = {
      lastToHandset: { applicationId: 'b', messageId: 'mb' },
      lastFromAddress: { applicationId: 'b', messageId: 'mb' },
      sendersOfAddress: ['a', 'b'],
    };
    expect(routeReply(context, 'a')).toEqual({ applicationId: 'b', replyTo: 'mb', rule: 'last-message-from-address' });
  });

  it('gives a reply to the only application that sends from the address, not to the last one to message the handset', () => {
    const context: ReplyContext = {
      lastToHandset: { applicationId: 'b', messageId: 'mb' },
      lastFromAddress: { applicationId: 'a', messageId: 'ma' },
      sendersOfAddress: ['a'],
    };
    expect(routeReply(context, undefined)).toEqual({ applicationId: 'a', replyTo: 'ma', rule: 'only-sender-from-address' });
  });

  it('tells two applications sharing a short code apart by which last messaged the handset from it', () => {
    const context: ReplyContext = {
      lastToHandset: { applicationId: 'b', messageId: 'mb2' },
      lastFromAddress: { applicationId: 'a', messageId: 'ma' },
      sendersOfAddress: ['a', 'b'],
    };
    expect(routeReply(context, undefined)).toEqual({ applicationId: 'a', replyTo: 'ma', rule: 'last-message-from-address' });
  });

  it('falls back to the last message to the handset only when no application is known to use the address', () => {
    const last = { applicationId: 'a', messageId: 'ma' };
    expect(routeReply({ lastToHandset: last, sendersOfAddress: [] }, undefined)).toEqual({
      applicationId: 'a',
      replyTo: 'ma',
      rule: 'last-message-to-handset',
    });
    expect(routeReply({ lastToHandset: last, sendersOfAddress: ['b', 'c'] }, undefined)).toEqual({ applicationId: '', replyTo: '', rule: 'unmatched' });
    expect(routeReply(none, undefined).rule).toBe('unmatched');
  });

  it('keeps a WhatsApp reply to a business number no application is known to use from whoever last messaged the handset', () => {
    const last = { applicationId: 'a', messageId: 'ma' };
    expect(routeReply({ lastToHandset: last, sendersOfAddress: [] }, undefined, undefined, false)).toEqual({
      applicationId: '',
      replyTo: '',
      rule: 'unmatched',
    });
    // The rules before it still apply.
    expect(routeReply({ lastToHandset: last, sendersOfAddress: ['b'] }, undefined, undefined, false).applicationId).toBe('b');
    expect(routeReply({ lastToHandset: last, sendersOfAddress: [] }, 'c', undefined, false).applicationId).toBe('c');
  });

  it('never gives a reply to an application that neither claimed the address nor messaged the handset, when others use the address', () => {
    const app = fc.constantFrom('a', 'b', 'c', 'd');
    const last = fc.option(fc.record({ applicationId: app, messageId: fc.string() }), { nil: undefined });
    fc.assert(
      fc.property(
        last,
        last,
        fc.uniqueArray(app, { maxLength: 4 }),
        fc.option(app, { nil: undefined }),
        (lastToHandset, lastFromAddress, sendersOfAddress, claimedBy) => {
          const route = routeReply({ lastToHandset, lastFromAddress, sendersOfAddress }, claimedBy);
          if (route.applicationId === '') return;
          const allowed =
            lastFromAddress && claimedBy && lastFromAddress.applicationId !== claimedBy
              ? lastFromAddress.applicationId
              : (claimedBy ?? (sendersOfAddress.length === 1 ? sendersOfAddress[0] : (lastFromAddress?.applicationId ?? lastToHandset?.applicationId)));
          expect(route.applicationId).toBe(allowed);
          // A reply names only a message of its own application.
          if (route.replyTo)
            expect([lastToHandset, lastFromAddress].some((m) => m?.applicationId === route.applicationId && m.messageId === route.replyTo)).toBe(true);
        },
      ),
    );
  });
});
