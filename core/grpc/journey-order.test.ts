import { describe, expect, it } from 'vitest';
import type { MessageStatus } from '../domain/message-status';
import { inJourneyOrder } from './journey-order';

const at = (time: string): number => Date.parse(`2026-11-29T02:${time}Z`);
const e = (status: MessageStatus, time: string, detail = '') => ({ status, at: at(time), detail });

describe("a message's events in journey order", () => {
  it('puts a report stamped at the start of its second after the earlier stages of that second, and keeps seconds in time order', () => {
    const events = [e('received', '18:57.000', 'delivered — 已送达 ✅'), e('accepted', '18:57.015'), e('submitted', '18:57.480'), e('read', '18:58.000')];
    expect(inJourneyOrder(events).map((x) => x.status)).toEqual(['accepted', 'submitted', 'received', 'read']);
  });

  it('keeps two events of one stage in the order they came, a failover’s two hand-overs or a bounce after a delivery', () => {
    const events = [
      e('submitted', '20:01.000', 'carrier Ā'),
      e('submitted', '20:01.000', 'carrier B'),
      e('received', '20:02.000'),
      e('failed', '20:02.000', 'bounced'),
    ];
    expect(inJourneyOrder(events).map((x) => x.detail)).toEqual(['carrier Ā', 'carrier B', '', 'bounced']);
  });
});
