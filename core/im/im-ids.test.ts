import { describe, expect, it } from 'vitest';
import { campaignMessageId } from '../campaigns/campaign-message-ids';
import { imAttemptId, isImAttemptId, keyedImMessageId, newImMessageId, parseImAttemptId } from './im-ids';

describe('Intelligent Messaging ids', () => {
  it('are lowercase UUIDs, as the interface promises', () => {
    expect(newImMessageId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{11}0$/);
  });

  it('give every attempt its own id that leads back to the message and its place', () => {
    const id = newImMessageId();
    const attempts = Array.from({ length: 10 }, (_, k) => imAttemptId(id, k));
    expect(new Set(attempts).size).toBe(10);
    attempts.forEach((a, k) => {
      expect(isImAttemptId(a)).toBe(true);
      expect(parseImAttemptId(a)).toEqual({ messageId: id, attempt: k });
    });
  });

  it('do not take other messages for attempts', () => {
    expect(isImAttemptId(newImMessageId())).toBe(false);
    expect(isImAttemptId('0d6f5b3c-2f1e-4c9a-8b7d-1234567890ab')).toBe(false);
    expect(isImAttemptId(campaignMessageId(123, 4))).toBe(false);
  });

  it('give a message sent with an Idempotency-Key the same id for the same key, in the layout of the others', () => {
    const id = keyedImMessageId('app-1', 'request-a.0');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{11}0$/);
    expect(keyedImMessageId('app-1', 'request-a.0')).toBe(id);
    expect(keyedImMessageId('app-2', 'request-a.0')).not.toBe(id);
    expect(keyedImMessageId('app-1', 'request-b.0')).not.toBe(id);
    expect(isImAttemptId(id)).toBe(false);
    expect(parseImAttemptId(imAttemptId(id, 3))).toEqual({ messageId: id, attempt: 3 });
  });
});
