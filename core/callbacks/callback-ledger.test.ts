import { describe, expect, it } from 'vitest';
import type { CallbackJob } from './callback-job';
import { createCallbackLedger } from './callback-ledger';

const job = (messageId: string, attempt = 0, applicationId = 'app-kōwhai'): CallbackJob => ({
  eventId: `${messageId}:sent`,
  applicationId,
  kind: 'status',
  messageId,
  body: { id: messageId, status: 'sent', detail: 'Kia ora, e hoa mā — tēnā koe 👋🏽' },
  createdAt: 1000,
  attempt,
  notBefore: 0,
});

describe('callback ledger', () => {
  it("shows every try of a message's callback with the receiver's answer, without the URL's credentials", () => {
    const ledger = createCallbackLedger();
    ledger.tried(job('m-1'), 'https://user:sēcret@hooks.localhost/status', 'retry', 'callback receiver answered 503', 5);
    ledger.tried(job('m-1', 1), 'https://user:sēcret@hooks.localhost/status', 'delivered', '', 6);
    ledger.answered('m-1', 204);
    expect(ledger.triesOf('m-1')).toEqual([
      {
        at: 5,
        kind: 'status',
        url: 'https://hooks.localhost/status',
        attempt: 1,
        httpStatus: 503,
        outcome: 'retry',
        error: 'callback receiver answered 503',
        event: 'sent',
      },
      { at: 6, kind: 'status', url: 'https://hooks.localhost/status', attempt: 2, httpStatus: 204, outcome: 'delivered', error: '', event: 'sent' },
    ]);
    expect(ledger.triesOf('never-seen')).toEqual([]);
  });

  it('counts per application the callbacks waiting for a retry and those that failed for good', () => {
    const ledger = createCallbackLedger();
    ledger.tried(job('a'), 'http://localhost:1/x', 'retry', 'callback failed: connect ECONNREFUSED', 1);
    ledger.tried(job('b'), 'http://localhost:1/x', 'retry', 'callback failed: connect ECONNREFUSED', 2);
    ledger.tried(job('b', 1), 'http://localhost:1/x', 'given_up', 'callback receiver answered 500', 3);
    ledger.tried(job('c', 0, 'app-two'), 'http://localhost:1/x', 'delivered');
    expect(ledger.applications()).toEqual([
      { applicationId: 'app-kōwhai', waiting: 1, delivered: 0, failedTries: 3, failed: 1, lastError: 'callback receiver answered 500', lastErrorAt: 3 },
      { applicationId: 'app-two', waiting: 0, delivered: 1, failedTries: 0, failed: 0, lastError: '', lastErrorAt: 0 },
    ]);
  });

  it('forgets the oldest messages beyond its limit', () => {
    const ledger = createCallbackLedger({ maxMessages: 2 });
    for (const id of ['m-1', 'm-2', 'm-3']) ledger.tried(job(id), 'http://localhost/x', 'delivered');
    expect(ledger.triesOf('m-1')).toEqual([]);
    expect(ledger.triesOf('m-3')).toHaveLength(1);
  });
});
