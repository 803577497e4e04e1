import { describe, expect, it } from 'vitest';
import type { StatusUpdate } from '../ports/bus-payloads';
import { createUnmatchedReports } from './unmatched-reports';

const report = (carrierId: string, status: StatusUpdate['status'] = 'received'): StatusUpdate =>
  ({ id: '', carrierId, status, at: 1, channel: 'sms' }) as StatusUpdate;

describe('delivery reports waiting for their carrier id', () => {
  it('are held until matched, and given up once their time has passed', () => {
    let t = 0;
    const held = createUnmatchedReports({ holdMs: 1000, maxHeld: 10, now: () => t });
    expect(held.hold(report('c1'))).toBe(true);
    expect(held.hold(report('c2'))).toBe(true);
    const { waiting } = held.take();
    expect(waiting).toEqual([report('c1'), report('c2')]);
    expect(held.release(waiting[0]!)).toBe(true);
    t = 1000;
    expect(held.take()).toEqual({ waiting: [], expired: [report('c2')] });
    expect(held.size).toBe(0);
  });

  it('keep one report per carrier id (a redelivery replaces it) and refuse more than they can hold', () => {
    const held = createUnmatchedReports({ holdMs: 1000, maxHeld: 2, now: () => 0 });
    held.hold(report('c1', 'submitted'));
    held.hold(report('c1', 'received'));
    held.hold(report('c2'));
    expect(held.hold(report('c3'))).toBe(false);
    expect(held.take().waiting.map((u) => [u.carrierId, u.status])).toEqual([
      ['c1', 'received'],
      ['c2', 'received'],
    ]);
    expect(held.hold(report(''))).toBe(false);
  });

  it('keep a later report for a carrier id when the one it replaced is released', () => {
    const held = createUnmatchedReports({ holdMs: 1000, maxHeld: 10, now: () => 0 });
    const first = report('smsc:ā1', 'submitted');
    held.hold(first);
    const later = report('smsc:ā1', 'received');
    held.hold(later);
    expect(held.release(first)).toBe(false);
    expect(held.all()).toEqual([later]);
    expect(held.release(later)).toBe(true);
    expect(held.size).toBe(0);
  });
});
