import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MessageRecord } from '../ports/message-history';
import { createScheduler } from './scheduler';

const at = (id: string, scheduledAt: number, content = 'Kia ora 👋🏽') => ({ id, scheduledAt, content }) as MessageRecord;
const MINUTE = 60_000;
const DAY = 86_400_000;

describe('scheduler', () => {
  it('hands messages over in time order once their time has come, and not before; those of one time in the order they came', () => {
    vi.useFakeTimers();
    try {
      const due: string[] = [];
      const start = Date.now();
      const s = createScheduler((records) => due.push(...records.map((r) => r.id)));
      s.add([at('late', start + 120), at('early-1', start + 40), at('now', start), at('early-2', start + 40)]);
      vi.advanceTimersByTime(20);
      expect(due).toEqual(['now']);
      vi.advanceTimersByTime(19);
      expect(due).toEqual(['now']);
      vi.advanceTimersByTime(1);
      expect(due).toEqual(['now', 'early-1', 'early-2']);
      vi.advanceTimersByTime(80);
      expect(due).toEqual(['now', 'early-1', 'early-2', 'late']);
      expect(s.size).toBe(0);
      s.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps what is not due when stopped', () => {
    const s = createScheduler(() => undefined);
    s.add([at('a', Date.now() + 60_000)]);
    s.stop();
    expect(s.size).toBe(1);
  });

  describe('with a spill directory', () => {
    let dir: string;
    beforeEach(() => {
      vi.useFakeTimers({ now: Date.UTC(2026, 10, 24, 9, 0, 0) });
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-scheduler-'));
    });
    afterEach(() => {
      vi.useRealTimers();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('holds in memory only what is due within ten minutes; a week of schedules waits on disk until its minute comes', () => {
      const due: MessageRecord[] = [];
      const s = createScheduler((records) => due.push(...records), { spillDir: path.join(dir, 'scheduled') });
      const t0 = Date.now();
      // One every five minutes for a week, in reverse order, four to each time.
      const week = Array.from({ length: 8064 }, (_, n) => at(`m${n}`, t0 + (Math.floor(n / 4) + 1) * 5 * MINUTE, `Tēnā koe ${n} — 你好 👋🏽`));
      s.add([...week].reverse());
      expect(s.size).toBeLessThanOrEqual(12);
      expect(s.size + s.spilled).toBe(8064);
      vi.advanceTimersByTime(DAY);
      // A day later: the first day's went out, each at its time; the rest of the week is still on disk.
      expect(due.map((r) => r.id).sort()).toEqual(
        week
          .slice(0, 1152)
          .map((r) => r.id)
          .sort(),
      );
      expect(due.every((r) => r.content.startsWith('Tēnā koe') && r.content.endsWith('— 你好 👋🏽'))).toBe(true);
      expect(s.size).toBeLessThanOrEqual(12);
      vi.advanceTimersByTime(7 * DAY);
      expect(due).toHaveLength(8064);
      expect(s.size + s.spilled).toBe(0);
      expect(fs.readdirSync(path.join(dir, 'scheduled'))).toEqual([]);
      s.stop();
    });

    it('empties its directory when made: recovery adds back what history holds', () => {
      const spillDir = path.join(dir, 'scheduled');
      const first = createScheduler(() => undefined, { spillDir });
      first.add([at('next-month', Date.now() + 30 * DAY)]);
      first.stop();
      expect(fs.readdirSync(spillDir)).toHaveLength(1);
      const second = createScheduler(() => undefined, { spillDir });
      expect(fs.readdirSync(spillDir)).toEqual([]);
      expect(second.spilled).toBe(0);
      second.stop();
    });

    it('hands every message over once, at its time and not before, however schedules and additions interleave', () => {
      const arbitrary = fc.array(
        fc.record({
          addAfter: fc.integer({ min: 0, max: 3 * DAY }),
          dueIn: fc.integer({ min: -MINUTE, max: 3 * DAY }),
          text: fc.string({ unit: 'grapheme', maxLength: 8 }),
        }),
        { minLength: 1, maxLength: 60 },
      );
      fc.assert(
        fc.property(arbitrary, (plan) => {
          vi.setSystemTime(Date.UTC(2026, 10, 24, 9, 0, 0));
          const spillDir = path.join(dir, `p${Math.random().toString(36).slice(2)}`);
          const handed: { id: string; at: number; scheduledAt: number; content: string }[] = [];
          const s = createScheduler(
            (records) => handed.push(...records.map((r) => ({ id: r.id, at: Date.now(), scheduledAt: r.scheduledAt, content: r.content }))),
            {
              spillDir,
            },
          );
          const start = Date.now();
          const adds = plan.map((p, n) => ({ ...p, id: `m${n}` })).sort((a, b) => a.addAfter - b.addAfter);
          for (const a of adds) {
            vi.advanceTimersByTime(start + a.addAfter - Date.now());
            s.add([at(a.id, Date.now() + a.dueIn, a.text)]);
          }
          vi.advanceTimersByTime(4 * DAY);
          s.stop();
          fs.rmSync(spillDir, { recursive: true, force: true });
          expect(handed.map((h) => h.id).sort()).toEqual(adds.map((a) => a.id).sort());
          for (const h of handed) {
            expect(h.at).toBeGreaterThanOrEqual(h.scheduledAt);
            expect(h.at - Math.max(h.scheduledAt, start + adds.find((a) => a.id === h.id)!.addAfter)).toBeLessThanOrEqual(1);
            expect(h.content).toBe(adds.find((a) => a.id === h.id)!.text);
          }
        }),
        { numRuns: 60 },
      );
    });
  });
});
