import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MessageRecord } from '../ports/message-history';
import { createRecentMessages } from './recent-messages';

const message = (id: string, numericId: number): MessageRecord => ({
  id,
  numericId,
  applicationId: 'kia-ora',
  channel: 'sms',
  direction: 'MT',
  destination: '+64211234567',
  source: 'TĒNĀ',
  content: 'Kia ora, e hoa mā — tēnā koe 👋🏽',
  reference: '',
  messageClass: '',
  mask: '',
  smsClass: 0,
  scheduledAt: 0,
  integrationId: '',
  via: 'sms_v2',
  segments: 1,
  acceptedAt: 0,
  replyTo: '',
});

describe('recent messages', () => {
  it('keeps a message in flight until its maximum age, then reads miss it', () => {
    let now = 0;
    const recent = createRecentMessages({ maxAgeMs: 1000, now: () => now });
    recent.put([message('m-1', 1)]);
    now = 999;
    expect(recent.get('m-1')?.content).toBe('Kia ora, e hoa mā — tēnā koe 👋🏽');
    expect(recent.getByNumericId(1)?.id).toBe('m-1');
    now = 1000;
    expect(recent.get('m-1')).toBeUndefined();
    expect(recent.getByNumericId(1)).toBeUndefined();
    expect(recent.size).toBe(0);
  });

  it('lets a message go the final time to live after its status is final, while others in flight stay', () => {
    let now = 0;
    const recent = createRecentMessages({ maxAgeMs: 60_000, finalTtlMs: 100, now: () => now });
    recent.put([message('delivered', 1), message('in-flight', 2)]);
    now = 500;
    recent.finished(['delivered']);
    now = 599;
    expect(recent.get('delivered')?.id).toBe('delivered');
    now = 600;
    expect(recent.get('delivered')).toBeUndefined();
    expect(recent.get('in-flight')?.id).toBe('in-flight');
    expect(recent.size).toBe(1);
  });

  it('ignores a final status for a message it does not hold', () => {
    const recent = createRecentMessages();
    recent.finished(['never-put']);
    recent.put([message('later', 1)]);
    expect(recent.get('later')?.id).toBe('later');
  });

  it('holds no more than the arrivals of its maximum age, however many are sent', () => {
    let now = 0;
    const recent = createRecentMessages({ maxAgeMs: 1000, now: () => now });
    // 100,000 messages at 100 per millisecond, none of them final: the age is the bound.
    for (let i = 0; i < 100_000; i++) {
      if (i % 100 === 0) now += 1;
      recent.put([message(`m-${i}`, i)]);
    }
    expect(recent.size).toBeLessThanOrEqual(100 * 1000);
    expect(recent.size).toBeGreaterThanOrEqual(100 * 999);
  });

  it('holds only what is in flight or finished within the final time to live, for any order of puts, finals and time', () => {
    type Step = { kind: 'put' | 'finish'; id: number; advance: number };
    const step = fc.record({
      kind: fc.constantFrom<'put' | 'finish'>('put', 'finish'),
      id: fc.integer({ min: 0, max: 20 }),
      advance: fc.integer({ min: 0, max: 50 }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps: Step[]) => {
        let now = 0;
        const maxAgeMs = 200;
        const finalTtlMs = 30;
        const recent = createRecentMessages({ maxAgeMs, finalTtlMs, now: () => now });
        // A model: id → when it was put and when it was finished (if it was, while held).
        const model = new Map<number, { put: number; finished?: number }>();
        const held = (id: number, t: number): boolean => {
          const m = model.get(id);
          if (!m) return false;
          return m.finished === undefined ? t < m.put + maxAgeMs : t < m.finished + finalTtlMs;
        };
        for (const s of steps) {
          now += s.advance;
          for (const [id] of model) if (!held(id, now)) model.delete(id);
          if (s.kind === 'put') {
            const before = model.get(s.id);
            recent.put([message(`m-${s.id}`, s.id)]);
            model.set(s.id, before?.finished === undefined ? { put: now } : { put: now, finished: now });
          } else {
            recent.finished([`m-${s.id}`]);
            const m = model.get(s.id);
            if (m && m.finished === undefined) m.finished = now;
          }
          for (let id = 0; id <= 20; id++) expect(recent.get(`m-${id}`) !== undefined).toBe(held(id, now));
          expect(recent.size).toBe([...model.keys()].filter((id) => held(id, now)).length);
        }
      }),
    );
  });
});
