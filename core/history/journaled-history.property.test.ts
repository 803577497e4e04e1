import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createJournaledHistory } from './journaled-history';
import { crashImage, journalBatch, recordingHistory, recordingLogger, segmentFiles } from './journal-test-support';

/**
 * The journal's promise, as a property: whatever people write, however appends
 * and flushes interleave, and wherever the process dies (between two calls,
 * half-way through writing a batch, or after a flush reached the engine but
 * before its checkpoint was renamed into place), replay hands the engine
 * exactly the rows journaled after the last checkpoint, in order: none lost,
 * none cut, none from before the checkpoint.
 */

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉', 'ā', ''),
);

type Op = { kind: 'append'; messages: string[]; events: string[] } | { kind: 'flush' };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('append' as const), messages: fc.array(text, { maxLength: 4 }), events: fc.array(text, { maxLength: 3 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
);

const crash = fc.record({
  /** Index of the operation before which (or, for inFlush, inside which) the process dies. */
  at: fc.nat(),
  how: fc.constantFrom('between' as const, 'torn' as const, 'inFlush' as const),
  torn: fc.record({ messages: fc.array(text, { minLength: 1, maxLength: 3 }), events: fc.array(text, { maxLength: 2 }), cut: fc.nat() }),
});

type Crash = typeof crash extends fc.Arbitrary<infer T> ? T : never;

const HOUR = 60 * 60 * 1000;

describe('journal replay (property)', () => {
  it('replays exactly the rows journaled after the last checkpoint, wherever the process dies', async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 20 }), crash, fc.integer({ min: 1, max: 300 }), fc.boolean(), crashAndReplay), { numRuns: 150 });
  }, 120_000);
});

async function crashAndReplay(ops: Op[], death: Crash, segmentBytes: number, fsync: boolean): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-prop-'));
  const made: string[] = [dir];
  try {
    const first = recordingHistory();
    const journal = await createJournaledHistory({ inner: first.history, dir, log: recordingLogger(), flushIntervalMs: HOUR, segmentBytes, fsync });
    // Rows journaled since the last checkpoint, as the model sees them.
    let messages: string[] = [];
    let events: string[] = [];
    let image: string | undefined;
    let expected: { messages: string[]; events: string[] } | undefined;
    const crashAt = death.at % (ops.length + 1);
    let n = 0;
    for (const [i, o] of ops.entries()) {
      if (i === crashAt && death.how !== 'inFlush') break;
      if (o.kind === 'append') {
        const m = o.messages.map((t) => JSON.stringify({ id: `m${n++}`, content: t }));
        const e = o.events.map((t) => JSON.stringify({ id: `e${n++}`, detail: t }));
        await journal.insertEncoded(m.join('\n'), e.join('\n'));
        messages.push(...m);
        events.push(...e);
      } else {
        if (i === crashAt) {
          // Dies once the engine has the rows, before the checkpoint says so.
          first.onInsert = () => {
            image = crashImage(dir);
            expected = { messages: [...messages], events: [...events] };
          };
        }
        await journal.flush();
        first.onInsert = undefined;
        messages = [];
        events = [];
      }
      if (image) break;
    }
    if (!image) {
      image = crashImage(dir);
      expected = { messages: [...messages], events: [...events] };
      if (death.how === 'torn') {
        // A batch being written when the process died: whole lines of it may be there, the last one is cut.
        const torn = death.torn;
        const tm = torn.messages.map((t) => JSON.stringify({ id: `m${n++}`, content: t }));
        const te = torn.events.map((t) => JSON.stringify({ id: `e${n++}`, detail: t }));
        const bytes = journalBatch(tm, te);
        const cut = torn.cut % bytes.length; // never the whole batch: its last newline is missing
        const last = segmentFiles(image).at(-1)!;
        fs.appendFileSync(path.join(image, last), bytes.subarray(0, cut));
        const whole = bytes.subarray(0, cut).toString('utf8').split('\n').slice(0, -1);
        for (const line of whole) (line[0] === 'E' ? expected.events : expected.messages).push(line.slice(1));
      }
    }
    made.push(image);
    await journal.close();

    const second = recordingHistory();
    const log = recordingLogger();
    const reopened = await createJournaledHistory({ inner: second.history, dir: image, log, flushIntervalMs: HOUR, segmentBytes });
    await reopened.close();
    expect({ messages: second.messages, events: second.events }).toEqual(expected);
    expect(log.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([]);

    // What was replayed is not replayed again.
    const third = recordingHistory();
    await (await createJournaledHistory({ inner: third.history, dir: image, log, flushIntervalMs: HOUR, segmentBytes })).close();
    expect({ messages: third.messages, events: third.events }).toEqual({ messages: [], events: [] });
  } finally {
    for (const d of made) fs.rmSync(d, { recursive: true, force: true });
  }
}
