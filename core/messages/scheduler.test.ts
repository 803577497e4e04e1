import { describe, expect, it } from 'vitest';
import type { MessageRecord } from '../ports/message-history';
import { createScheduler } from './scheduler';

const at = (id: string, scheduledAt: number) => ({ id, scheduledAt }) as MessageRecord;

describe('scheduler', () => {
  it('hands messages over in time order once their time has come, and not before', async () => {
    const due: string[] = [];
    const start = Date.now();
    const s = createScheduler((records) => due.push(...records.map((r) => r.id)));
    s.add([at('late', start + 120), at('early', start + 40), at('now', start)]);
    await new Promise((r) => setTimeout(r, 20));
    expect(due).toEqual(['now']);
    await new Promise((r) => setTimeout(r, 50));
    expect(due).toEqual(['now', 'early']);
    await new Promise((r) => setTimeout(r, 100));
    expect(due).toEqual(['now', 'early', 'late']);
    expect(s.size).toBe(0);
    s.stop();
  });

  it('keeps what is not due when stopped', () => {
    const s = createScheduler(() => undefined);
    s.add([at('a', Date.now() + 60_000)]);
    s.stop();
    expect(s.size).toBe(1);
  });
});
