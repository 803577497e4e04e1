import { describe, expect, it } from 'vitest';
import type { StatusUpdate } from '../ports/bus-payloads';
import { createUnmatchedReports } from './unmatched-reports';

const report = (carrierId: string, status: StatusUpdate['status'] = 'received', channel = 'sms'): StatusUpdate =>
  ({ id: '', carrierId, status, at: 1, channel }) as StatusUpdate;

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

  it('are due at once when a submit naming their carrier id is recorded, however long their next look was', () => {
    let t = 0;
    const held = createUnmatchedReports({ holdMs: 60_000, maxHeld: 10, now: () => t });
    held.hold(report('c1'));
    held.hold(report('c2'));
    for (let i = 0; i < 8; i++) {
      for (const u of held.take().waiting) held.notFound(u);
      t += 500;
    }
    expect(held.take().waiting).toEqual([]);
    expect(held.dueNow(['c2', 'c9'])).toBe(true);
    expect(held.take().waiting).toEqual([report('c2')]);
    expect(held.dueNow(['c9'])).toBe(false);
    // Made due while a look that missed it was running: that miss does not put it back to waiting.
    const [c1] = held.all().filter((u) => u.carrierId === 'c1');
    expect(held.dueNow(['c1'])).toBe(true);
    held.notFound(c1!);
    expect(held.take().waiting.map((u) => u.carrierId)).toEqual(['c1', 'c2']);
  });

  it('held before a restart, wait only what is left of their time (but a few seconds at least), not a whole wait again', () => {
    let t = 10_000;
    const held = createUnmatchedReports({ holdMs: 1000, maxHeld: 10, now: () => t, restartGraceMs: 200 });
    expect(held.hold(report('c1'), 9_500)).toBe(true);
    expect(held.hold(report('c2'), 5_000)).toBe(true);
    expect(held.heldFor(held.all()[0]!)).toBe(500);
    t = 10_200;
    // c2's wait ran out long ago: it gets the grace after the start, no more.
    expect(held.take().expired).toEqual([report('c2')]);
    t = 10_500;
    expect(held.take().expired).toEqual([report('c1')]);
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

  it("keep the read they hold when its delivered comes after it (WhatsApp's webhooks keep no order), and an e-mail's bounce after its delivered", () => {
    const held = createUnmatchedReports({ holdMs: 1000, maxHeld: 10, now: () => 0 });
    expect(held.hold(report('wamid.mā', 'read', 'whatsapp'))).toBe(true);
    expect(held.hold(report('wamid.mā', 'received', 'whatsapp'))).toBe(true);
    expect(held.all().map((u) => u.status)).toEqual(['read']);
    held.hold(report('relay-ā2', 'received', 'email'));
    held.hold(report('relay-ā2', 'failed', 'email'));
    expect(held.all().map((u) => u.status)).toEqual(['read', 'failed']);
  });

  it("keep an SMS's delivered when the carrier reports a failure for it after (a second, conflicting receipt)", () => {
    const held = createUnmatchedReports({ holdMs: 1000, maxHeld: 10, now: () => 0 });
    held.hold(report('smsc:ā3', 'received'));
    expect(held.hold(report('smsc:ā3', 'failed'))).toBe(true);
    expect(held.all().map((u) => u.status)).toEqual(['received']);
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

describe('delivery reports whose carrier id history does not know either', () => {
  it('are looked for again four times half a second apart, then less and less often up to the longest wait, so a stream of them costs few history queries', () => {
    let t = 0;
    const held = createUnmatchedReports({ holdMs: 120_000, maxHeld: 10, now: () => t, firstRetryMs: 500, longestRetryMs: 8_000 });
    const u = report('other-smsc:午後');
    held.hold(u);
    const triedAt: number[] = [];
    for (t = 0; t < 60_000; t += 500) {
      const { waiting } = held.take();
      if (waiting.length === 0) continue;
      triedAt.push(t);
      held.notFound(waiting[0]!);
    }
    expect(triedAt.slice(0, 9)).toEqual([0, 500, 1000, 1500, 2000, 3000, 5000, 9000, 17000]);
    // Then every 8 s: 120 tries at a steady half second became 14.
    expect(triedAt.length).toBe(14);
  });

  it('do not keep a newer report that can be matched waiting behind them', () => {
    let t = 0;
    const held = createUnmatchedReports({ holdMs: 120_000, maxHeld: 5000, now: () => t });
    for (let i = 0; i < 3000; i++) held.hold(report(`lost-${i}`));
    for (const u of held.take(2000).waiting) held.notFound(u);
    t = 500;
    // The thousand not tried yet come first.
    const second = held.take(2000).waiting;
    expect(second.slice(0, 1000).map((u) => u.carrierId)).toEqual(Array.from({ length: 1000 }, (_, i) => `lost-${2000 + i}`));
    for (const u of second) held.notFound(u);
    held.hold(report('kiwi-ā'));
    t = 1000;
    expect(held.take(2000).waiting.map((u) => u.carrierId)).toContain('kiwi-ā');
  });

  it('are looked for at once again when the carrier sends a later report for the same id', () => {
    let t = 0;
    const held = createUnmatchedReports({ holdMs: 120_000, maxHeld: 10, now: () => t });
    held.hold(report('c1', 'submitted'));
    for (const u of held.take().waiting) held.notFound(u);
    t = 100;
    held.hold(report('c1', 'received'));
    expect(held.take().waiting.map((u) => u.status)).toEqual(['received']);
  });
});
