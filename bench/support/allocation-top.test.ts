import { describe, expect, it } from 'vitest';
import { summariseAllocations } from './allocation-top';

const frame = (functionName: string, selfSize: number, children: unknown[] = []) => ({
  callFrame: { functionName, url: 'file:///app/workers/channel-worker.ts', lineNumber: 0, columnNumber: 0 },
  selfSize,
  children,
});

describe('summing a sampled allocation profile by function', () => {
  it('counts a recursing function’s bytes once in its inclusive total, and every frame’s own bytes in its self total', () => {
    const head = frame('(root)', 0, [frame('sendOne', 10, [frame('sendOne', 5, [frame('encode', 20)])]), frame('encode', 1)]);
    const { totalBytes, rows } = summariseAllocations(head as never);
    expect(totalBytes).toBe(36);
    const byName = new Map(rows.map((r) => [r.name.split(' ')[0], r]));
    expect(byName.get('sendOne')).toMatchObject({ selfBytes: 15, inclusiveBytes: 35 });
    expect(byName.get('encode')).toMatchObject({ selfBytes: 21, inclusiveBytes: 21 });
    expect(rows[0]!.name.startsWith('(root)')).toBe(true);
  });
});
