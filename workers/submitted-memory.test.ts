import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { quietLog } from './simulators/smpp-test-kit';
import { claimSubmittedMemoryFile, openSubmittedMemory, type SubmittedMemory } from './submitted-memory';

const dirs: string[] = [];
const opened: SubmittedMemory[] = [];
afterEach(() => {
  for (const m of opened.splice(0)) m.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tmpFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-submitted-'));
  dirs.push(dir);
  return path.join(dir, 'workers', 'submitted-sms-0.jsonl');
}

/** A memory on `file` with a clock the test moves. */
function open(file: string, clock: { t: number }, options: { horizonMs?: number; maxEntries?: number } = {}): SubmittedMemory {
  const m = openSubmittedMemory({ file, log: quietLog, now: () => clock.t, ...options });
  opened.push(m);
  return m;
}

function close(m: SubmittedMemory): void {
  m.close();
  opened.splice(opened.indexOf(m), 1);
}

describe('the memory of messages a worker submitted', () => {
  it('recalls a submit after a reopen, with its parts’ carrier ids, when, and its route, ids of any script included', () => {
    const file = tmpFile();
    const clock = { t: 1_700_000_000_000 };
    const m = open(file, clock);
    m.remember('tēnā-koe-👋🏽', ['spark:1a', 'spark:1b', 'spark:1c'], 'route default → carrier spark');
    m.remember('你好-1', ['spark:2a']);
    m.remember('no-ids', []);
    close(m);
    clock.t += 1000;
    const again = open(file, clock);
    expect(again.recall('tēnā-koe-👋🏽')).toEqual({
      id: 'tēnā-koe-👋🏽',
      at: 1_700_000_000_000,
      carrierIds: ['spark:1a', 'spark:1b', 'spark:1c'],
      detail: 'route default → carrier spark',
    });
    expect(again.recall('你好-1')).toEqual({ id: '你好-1', at: 1_700_000_000_000, carrierIds: ['spark:2a'] });
    expect(again.recall('no-ids')?.carrierIds).toEqual([]);
    expect(again.recall('never')).toBeUndefined();
    expect(fs.readFileSync(file, 'utf8')).toContain('tēnā-koe-👋🏽');
  });

  it('is on disk by the next turn of the event loop, each turn’s submits in one append', async () => {
    const file = tmpFile();
    const m = open(file, { t: 1_000 });
    m.remember('a', ['c:1']);
    m.remember('b', ['c:2']);
    expect(fs.readFileSync(file, 'utf8')).toBe('');
    await new Promise((r) => setImmediate(r));
    expect(
      fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual(['a', 'b']);
  });

  it('forgets a submit past its horizon, in memory and when reopened', () => {
    const file = tmpFile();
    const clock = { t: 10_000 };
    const m = open(file, clock, { horizonMs: 5_000 });
    m.remember('old', ['c:1']);
    clock.t += 3_000;
    m.remember('newer', ['c:2']);
    clock.t += 2_500;
    expect(m.recall('old')).toBeUndefined();
    expect(m.recall('newer')?.carrierIds).toEqual(['c:2']);
    close(m);
    const again = open(file, clock, { horizonMs: 5_000 });
    expect(again.size).toBe(1);
    // Rewritten without it.
    expect(fs.readFileSync(file, 'utf8')).not.toContain('"old"');
  });

  it('keeps no more than its cap, forgetting the oldest first, and its file stays bounded', () => {
    const file = tmpFile();
    const clock = { t: 10_000 };
    const m = open(file, clock, { maxEntries: 100 });
    for (let i = 0; i < 10_000; i++) {
      m.remember(`m-${i}`, [`c:${i}`]);
      if (i % 100 === 99) m.flush();
    }
    m.flush();
    expect(m.size).toBe(100);
    expect(m.recall('m-9899')).toBeUndefined();
    expect(m.recall('m-9900')?.carrierIds).toEqual(['c:9900']);
    // Rewritten with the live entries as it grew: never the 10,000 lines appended.
    expect(fs.readFileSync(file, 'utf8').trim().split('\n').length).toBeLessThanOrEqual(4096 + 100);
    close(m);
    expect(open(file, clock, { maxEntries: 100 }).size).toBe(100);
    expect(open(tmpFile(), clock, { maxEntries: 10 }).size).toBe(0);
  });

  it('keeps the last submit of a message submitted again and again, and forgets in order past the older copies', () => {
    const file = tmpFile();
    const clock = { t: 10_000 };
    const m = open(file, clock, { maxEntries: 3 });
    for (let i = 0; i < 5000; i++) {
      clock.t++;
      m.remember(['a', 'b', 'c'][i % 3]!, [`c:${i}`]);
      if (i % 64 === 0) m.flush();
    }
    expect(m.size).toBe(3);
    expect(['a', 'b', 'c'].map((id) => m.recall(id)?.carrierIds[0])).toEqual(['c:4998', 'c:4999', 'c:4997']);
    m.remember('d', ['c:d']);
    // The oldest last submit is c's.
    expect(m.recall('c')).toBeUndefined();
    expect(['a', 'b', 'd'].map((id) => m.recall(id)?.carrierIds[0])).toEqual(['c:4998', 'c:4999', 'c:d']);
    close(m);
    const again = open(file, clock, { maxEntries: 3 });
    expect(['a', 'b', 'c', 'd'].map((id) => again.recall(id)?.carrierIds[0])).toEqual(['c:4998', 'c:4999', undefined, 'c:d']);
  });

  it('drops a torn last line (a crash in the middle of an append) and lines that do not parse, keeping the rest', () => {
    const file = tmpFile();
    const clock = { t: 50_000 };
    const m = open(file, clock);
    m.remember('whole', ['c:1']);
    close(m);
    fs.appendFileSync(file, '{"id":"junk"}\nnot json\n{"id":"torn","at":50000,"carrierIds":["c:');
    const again = open(file, clock);
    expect(again.size).toBe(1);
    expect(again.recall('whole')?.carrierIds).toEqual(['c:1']);
    expect(again.recall('torn')).toBeUndefined();
    // The file is whole again: the next append is not joined to the torn line.
    again.remember('after', ['c:2']);
    close(again);
    const third = open(file, clock);
    expect(third.recall('after')?.carrierIds).toEqual(['c:2']);
    expect(third.recall('whole')?.carrierIds).toEqual(['c:1']);
  });

  it('keeps working in memory when its file cannot be opened', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-submitted-'));
    dirs.push(dir);
    // A file where its directory should be.
    fs.writeFileSync(path.join(dir, 'workers'), '');
    const warned: string[] = [];
    const log = { ...quietLog, warn: (msg: string) => void warned.push(msg) };
    const m = openSubmittedMemory({ file: path.join(dir, 'workers', 'submitted-sms-0.jsonl'), log });
    opened.push(m);
    m.remember('x', ['c:1']);
    m.flush();
    expect(m.recall('x')?.carrierIds).toEqual(['c:1']);
    expect(warned).toEqual(['could not open the file of messages this worker submitted; it remembers them in memory only']);
  });

  it('recalls after any sequence of submits, reopens and torn appends exactly the last submit of each message within horizon and cap', () => {
    const id = fc.constantFrom('a', 'b', 'tē', '你好', '👋🏽', 'z-1', 'z-2', 'z-3');
    const step = fc.oneof(
      fc.record({ kind: fc.constant('submit' as const), id, parts: fc.array(fc.string({ minLength: 1, maxLength: 6, unit: 'grapheme' }), { maxLength: 3 }) }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 4000 }) }),
      fc.record({ kind: fc.constant('reopen' as const), torn: fc.boolean() }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 6 }), (steps, maxEntries) => {
        const file = tmpFile();
        const clock = { t: 1_000_000 };
        const horizonMs = 5_000;
        let m = open(file, clock, { horizonMs, maxEntries });
        // The model: each message's last submit, in the order of submits.
        const model = new Map<string, { at: number; carrierIds: string[] }>();
        for (const s of steps) {
          if (s.kind === 'submit') {
            m.remember(s.id, s.parts);
            model.delete(s.id);
            model.set(s.id, { at: clock.t, carrierIds: s.parts });
            while (model.size > maxEntries) model.delete(model.keys().next().value!);
          } else if (s.kind === 'wait') {
            clock.t += s.ms;
          } else {
            close(m);
            if (s.torn) fs.appendFileSync(file, '{"id":"torn","at":');
            m = open(file, clock, { horizonMs, maxEntries });
          }
          for (const [mid, e] of model) if (clock.t - e.at > horizonMs) model.delete(mid);
          for (const mid of ['a', 'b', 'tē', '你好', '👋🏽', 'z-1', 'z-2', 'z-3', 'torn']) {
            const want = model.get(mid);
            expect(m.recall(mid)).toEqual(want ? { id: mid, ...want } : undefined);
          }
        }
        close(m);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the file a worker keeps its memory in', () => {
  it('is its own while its process lives, and taken again once that process is gone', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-submitted-claim-'));
    dirs.push(dir);
    const first = claimSubmittedMemoryFile(dir, 'sms');
    expect(path.basename(first.file)).toBe('submitted-sms-0.jsonl');
    // Another worker of this process: a file of its own.
    const beside = claimSubmittedMemoryFile(dir, 'sms');
    expect(path.basename(beside.file)).toBe('submitted-sms-1.jsonl');
    beside.release();
    first.release();
    // Left behind by this very process id (a container's process 1 started again): taken back.
    fs.writeFileSync(path.join(dir, 'submitted-sms-0.pid'), String(process.pid));
    const back = claimSubmittedMemoryFile(dir, 'sms');
    expect(path.basename(back.file)).toBe('submitted-sms-0.jsonl');
    back.release();
    // Held by another live process (this one's parent): the next file.
    fs.writeFileSync(path.join(dir, 'submitted-sms-0.pid'), String(process.ppid));
    const second = claimSubmittedMemoryFile(dir, 'sms');
    expect(path.basename(second.file)).toBe('submitted-sms-1.jsonl');
    // Held by a process long gone: free.
    fs.writeFileSync(path.join(dir, 'submitted-sms-0.pid'), '2147483646');
    const free = claimSubmittedMemoryFile(dir, 'sms');
    expect(path.basename(free.file)).toBe('submitted-sms-0.jsonl');
    free.release();
    second.release();
    expect(fs.existsSync(path.join(dir, 'submitted-sms-1.pid'))).toBe(false);
    const email = claimSubmittedMemoryFile(dir, 'email');
    expect(path.basename(email.file)).toBe('submitted-email-0.jsonl');
    email.release();
  });
});
