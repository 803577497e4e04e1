import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keptWarnings } from './kept-warnings-test-kit';
import { rateLimitedWarning } from './rate-limited-warning';

describe('a rate-limited warning', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('says a burst of 2,113 at once in one line, and how many more came in one line at the end of the minute', () => {
    const { log, warnings } = keptWarnings();
    const warn = rateLimitedWarning(log, 'delivery receipt not recorded; the SMSC will send it again', { count: 'receipts' });
    for (let i = 0; i < 2113; i++) {
      warn({ carrierId: `smsc:ā-${i}` });
      vi.advanceTimersByTime(1);
    }
    expect(warnings).toEqual([{ msg: 'delivery receipt not recorded; the SMSC will send it again', fields: { carrierId: 'smsc:ā-0', receipts: 1 } }]);

    vi.advanceTimersByTime(60_000);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toEqual({ msg: 'delivery receipt not recorded; the SMSC will send it again', fields: { carrierId: 'smsc:ā-2112', receipts: 2112 } });
    vi.advanceTimersByTime(10 * 60_000);
    expect(warnings).toHaveLength(2);
  });

  it('says one that comes alone at once, each time, when a minute or more lies between them', () => {
    const { log, warnings } = keptWarnings();
    const warn = rateLimitedWarning(log, 'consuming a partition failed; retrying', { count: 'failures' });
    warn({ partition: 3 });
    vi.advanceTimersByTime(60_000);
    warn({ partition: 5 });
    expect(warnings.map((w) => w.fields)).toEqual([
      { partition: 3, failures: 1 },
      { partition: 5, failures: 1 },
    ]);
  });

  it('says no more than one line a period while failures keep coming, each with how many since the line before', () => {
    const { log, warnings } = keptWarnings();
    const warn = rateLimitedWarning(log, 'blocking read failed; retrying', { count: 'failures', everyMs: 1000 });
    // Ten a second for five seconds: the first at once, the 49 others a line a second.
    for (let i = 0; i < 50; i++) {
      warn();
      vi.advanceTimersByTime(100);
    }
    vi.advanceTimersByTime(1000);
    expect(warnings.map((w) => w.fields.failures)).toEqual([1, 9, 10, 10, 10, 10]);
  });
});
