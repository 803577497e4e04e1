import { describe, expect, it } from 'vitest';
import { parseAttemptList } from './im-plan';

describe('an application’s default delivery attempts', () => {
  it('takes read on WhatsApp and RCS, whose carriers report it', () => {
    expect(parseAttemptList('wab:read:60,rcs:read,sms')).toEqual([
      { channel: 'wab', event: 'read', timeout: 60 },
      { channel: 'rcs', event: 'read' },
      { channel: 'sms', event: '' },
    ]);
  });

  it('refuses read on SMS, MMS and e-mail, which never report it, saying which channels do', () => {
    for (const text of ['wab:read:60,sms:read', 'email:read:30', 'mms:READ'])
      expect(() => parseAttemptList(text)).toThrow(/never reports read: only wab, rcs do/);
  });
});
