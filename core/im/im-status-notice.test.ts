import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MESSAGE_STATUSES } from '../domain/message-status';
import { IM_STATUSES, imCallbackBody, toImStatus, type ImStatusNotice } from './im-status-notice';

/** No lone surrogate (half of a character): encodeURIComponent refuses one. */
const wellFormed = (s: string): boolean => {
  try {
    encodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
};
const notice = (n: Partial<ImStatusNotice> = {}): ImStatusNotice => ({
  applicationId: 'app',
  messageId: 'm-1',
  status: 'received',
  reference: 'tēnā-koe',
  at: 1,
  ...n,
});

describe('Intelligent Messaging status callbacks', () => {
  it('posts the message as a whole with only the spec’s id, status and detail', () => {
    expect(imCallbackBody(notice({ status: 'accepted' }))).toEqual({ id: 'm-1', status: 'accepted', detail: 'tēnā-koe' });
  });

  it('names the attempt’s channel and number, and why it did not succeed', () => {
    expect(imCallbackBody(notice({ status: 'expired', attempt: { number: 1, channel: 'wab' }, reason: 'no read within 60 s' }))).toEqual({
      id: 'm-1',
      status: 'expired',
      detail: 'tēnā-koe',
      channel: 'wab',
      attempt: 1,
      reason: 'no read within 60 s',
    });
  });

  it('tells opt-outs and quota refusals as rejected and keeps queued to itself', () => {
    expect(toImStatus('blocked')).toBe('rejected');
    expect(toImStatus('deficient')).toBe('rejected');
    expect(toImStatus('queued')).toBeUndefined();
    for (const s of MESSAGE_STATUSES) expect([...IM_STATUSES, undefined]).toContain(toImStatus(s));
  });

  it('keeps detail and reason within 255 characters without splitting one, whatever the text', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'ā', '—', '你', '👋🏽', '🎉', 'Я'), minLength: 200, maxLength: 400 });
    fc.assert(
      fc.property(text, text, (reference, reason) => {
        const body = imCallbackBody(notice({ reference, reason, attempt: { number: 2, channel: 'sms' } }));
        const detail = body.detail as string;
        expect([...detail].length).toBeLessThanOrEqual(255);
        expect(reference.startsWith(detail)).toBe(true);
        expect(wellFormed(detail)).toBe(true);
        if (reason) {
          expect([...(body.reason as string)].length).toBeLessThanOrEqual(255);
          expect(wellFormed(body.reason as string)).toBe(true);
        }
        expect(JSON.parse(JSON.stringify(body))).toEqual(body);
      }),
    );
  });
});
