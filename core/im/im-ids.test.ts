import { describe, expect, it } from 'vitest';
import { campaignMessageId } from '../campaigns/campaign-message-ids';
import { imAttemptId, isImAttemptId, newImMessageId, parseImAttemptId } from './im-ids';

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
});
