import { describe, expect, it } from 'vitest';
import type { Logger } from '../../lib/log';
import { createOutageLog } from './outage-log';

const recording = () => {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, msg, fields });
  return { lines, log: { warn: at('warn'), info: at('info'), error: at('error'), debug: at('debug') } as unknown as Logger };
};

describe('the gateway’s log while core is out of reach', () => {
  it('says so at the first 503, then every 10 s with how many, and once when requests are answered again', () => {
    let t = 0;
    const { lines, log } = recording();
    const outages = createOutageLog(log, { now: () => t });
    outages.answered(202);
    expect(lines).toEqual([]);
    for (let i = 0; i < 2_500; i++) {
      outages.answered(i % 5 === 0 ? 504 : 503);
      t += 10;
    }
    // 25 s of 503s: at 0, 10 and 20 s.
    expect(lines.map((l) => [l.level, l.fields.answers])).toEqual([
      ['warn', 1],
      ['warn', 1000],
      ['warn', 1000],
    ]);
    outages.answered(202);
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'answering requests again', fields: { unavailableAnswers: 2_500 } });
    outages.answered(202);
    expect(lines).toHaveLength(4);
  });

  it('does not call a client’s own errors an outage, nor the end of one: the gateway answers those without core', () => {
    let t = 0;
    const { lines, log } = recording();
    const outages = createOutageLog(log, { now: () => t });
    for (const status of [400, 401, 404, 413, 422, 429, 500]) outages.answered(status);
    expect(lines).toEqual([]);
    // Nine 503s in ten, a 400 among them, for 20 s: a line at the start and every 10 s, no "again".
    for (let i = 0; i < 2_000; i++) {
      outages.answered(i % 10 === 9 ? 400 : 503);
      t += 10;
    }
    expect(lines.map((l) => l.level)).toEqual(['warn', 'warn']);
    outages.answered(201);
    expect(lines.map((l) => l.level)).toEqual(['warn', 'warn', 'info']);
  });

  it('calls an answer an outage when the interface renders one as 500 (Intelligent Messaging), saying why', () => {
    const { lines, log } = recording();
    const outages = createOutageLog(log, { now: () => 0 });
    outages.answered(500, 'core did not answer in time');
    expect(lines).toEqual([
      expect.objectContaining({ level: 'warn', fields: expect.objectContaining({ status: 500, reason: 'core did not answer in time' }) }),
    ]);
  });
});
