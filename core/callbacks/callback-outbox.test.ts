import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { setLogLevel, createLogger } from '../../lib/log';
import { callbacksUnacknowledged } from '../../lib/metrics';
import type { CallbackJob } from './callback-job';
import type { BusPosition } from '../ports/bus';
import {
  encodeLookedUp,
  encodeLookups,
  encodeOwed,
  encodePending,
  encodePublished,
  encodeSettled,
  type KeptJob,
  type OwedLookup,
  replayOutbox,
} from './callback-outbox-format';
import { openCallbackOutbox } from './callback-outbox';

setLogLevel('error');
const log = createLogger({ test: 'callback-outbox' });

/** Text from the whole of Unicode, including astral characters and the odd separators. */
const unicodeText = fc.string({ unit: 'grapheme', maxLength: 40 });
const jobOf = (eventId: string, content: string, attempt = 0): CallbackJob => ({
  eventId,
  applicationId: 'acme',
  kind: 'reply',
  messageId: `m-${eventId}`,
  body: { id: `m-${eventId}`, content, source: '+6421000001' },
  createdAt: 1_700_000_000_000,
  attempt,
  notBefore: attempt === 0 ? 0 : 1_700_000_000_000 + attempt * 1000,
});

/** One line of the file as the model sees it. */
type Line = { owe: CallbackJob } | { settle: string };
const lineArb = (ids: string[]): fc.Arbitrary<Line> =>
  fc.oneof(
    fc
      .record({ id: fc.constantFrom(...ids), content: unicodeText, attempt: fc.nat(5) })
      .map(({ id, content, attempt }) => ({ owe: jobOf(id, content, attempt) })),
    fc.constantFrom(...ids).map((id) => ({ settle: id })),
  );
const encodeLine = (l: Line): Buffer => ('owe' in l ? encodeOwed([l.owe]) : encodeSettled([l.settle]));
const modelOf = (lines: readonly Line[]): [string, CallbackJob][] => {
  const m = new Map<string, CallbackJob>();
  for (const l of lines) {
    if ('owe' in l) m.set(l.owe.eventId, l.owe);
    else m.delete(l.settle);
  }
  return [...m];
};

describe('callback outbox replay', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
  const tmpDir = (): string => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-outbox-'));
    dirs.push(d);
    return d;
  };

  it('brings back exactly the unsettled jobs written before a crash, whatever the text and wherever the last line was torn', () => {
    const ids = ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'];
    fc.assert(
      fc.property(
        fc.array(lineArb(ids), { maxLength: 40 }),
        fc.nat(),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (lines, cut, tornFraction) => {
          const encoded = lines.map(encodeLine);
          // The crash came after `complete` whole lines and in the middle of the next one.
          const complete = lines.length === 0 ? 0 : cut % (lines.length + 1);
          const torn = encoded[complete];
          const tail = torn ? torn.subarray(0, Math.floor(tornFraction * torn.length)) : Buffer.alloc(0);
          const bytes = Buffer.concat([...encoded.slice(0, complete), tail]);
          const { owed, damaged } = replayOutbox(bytes);
          expect(damaged).toBe(0);
          expect([...owed]).toEqual(modelOf(lines.slice(0, complete)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('brings back exactly the status changes still waiting for a lookup before a crash, whatever their text and wherever the last line was torn', () => {
    const ids = ['e1', 'e2', 'e3', 'e4'];
    const lookupOf = (eventId: string, detail: string): OwedLookup => ({
      eventId,
      change: { messageId: `m-${eventId}`, applicationId: 'acme', channel: 'sms', status: 'received', at: 1_700_000_000_000, detail },
    });
    type LookupLine = { wait: OwedLookup } | { ended: string } | { owe: CallbackJob };
    const lookupLineArb: fc.Arbitrary<LookupLine> = fc.oneof(
      fc.record({ id: fc.constantFrom(...ids), detail: unicodeText }).map(({ id, detail }) => ({ wait: lookupOf(id, detail) })),
      fc.constantFrom(...ids).map((id) => ({ ended: id })),
      // A job with the same event id does not end a lookup: only its own line does.
      fc.record({ id: fc.constantFrom(...ids), content: unicodeText }).map(({ id, content }) => ({ owe: jobOf(id, content) })),
    );
    const encode = (l: LookupLine): Buffer => ('wait' in l ? encodeLookups([l.wait]) : 'ended' in l ? encodeLookedUp([l.ended]) : encodeOwed([l.owe]));
    fc.assert(
      fc.property(
        fc.array(lookupLineArb, { maxLength: 30 }),
        fc.nat(),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (lines, cut, tornFraction) => {
          const encoded = lines.map(encode);
          const complete = lines.length === 0 ? 0 : cut % (lines.length + 1);
          const torn = encoded[complete];
          const tail = torn ? torn.subarray(0, Math.floor(tornFraction * torn.length)) : Buffer.alloc(0);
          const { lookups, damaged } = replayOutbox(Buffer.concat([...encoded.slice(0, complete), tail]));
          const model = new Map<string, OwedLookup>();
          for (const l of lines.slice(0, complete)) {
            if ('wait' in l) model.set(l.wait.eventId, l.wait);
            else if ('ended' in l) model.delete(l.ended);
          }
          expect(damaged).toBe(0);
          expect([...lookups]).toEqual([...model]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('cuts lines at newline bytes, so a character whose UTF-16 length differs from its UTF-8 length never shifts a line', () => {
    const jobs = [jobOf('a', 'Kia ora, e hoa mā — tēnā koe'), jobOf('b', 'Привет 你好世界 👋🏽🎉'), jobOf('c', 'line\u2028separator\nnewline')];
    const bytes = Buffer.concat([encodeOwed(jobs), encodeSettled(['b'])]);
    expect(bytes.length).toBeGreaterThan(bytes.toString('utf8').length);
    expect([...replayOutbox(bytes).owed.values()]).toEqual([jobs[0], jobs[2]]);
    // Torn inside the 4-byte emoji of a last line: that line is dropped, the rest kept.
    const last = encodeOwed([jobOf('d', '👋🏽')]);
    const at = last.indexOf(Buffer.from('👋🏽')) + 2;
    expect([...replayOutbox(Buffer.concat([bytes, last.subarray(0, at)])).owed.keys()]).toEqual(['a', 'c']);
  });

  it('skips a damaged line in the middle and keeps the lines around it', () => {
    const bytes = Buffer.concat([encodeOwed([jobOf('a', 'x')]), Buffer.from('J{"eventId":\n'), encodeOwed([jobOf('b', 'y')])]);
    const replayed = replayOutbox(bytes);
    expect([...replayed.owed.keys()]).toEqual(['a', 'b']);
    expect(replayed.damaged).toBe(1);
  });

  it('keeps what is owed, and what was published and not yet acknowledged, across a kill at any point of a run, with compaction and hand-overs in between', () => {
    type Op =
      | { owe: { id: string; content: string }[] }
      | { retry: string[]; attempt: number }
      | { settle: string[] }
      | { hold: { id: string; content: string }[] }
      | { handOver: string[] }
      | { handOverAt: string[] }
      | { acknowledge: string[] };
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const jobsArb = fc.array(fc.record({ id: fc.constantFrom(...ids), content: unicodeText }), { minLength: 1, maxLength: 4 });
    const idsArb = fc.array(fc.constantFrom(...ids), { minLength: 1, maxLength: 4 });
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ owe: jobsArb }),
      fc.record({ retry: idsArb, attempt: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ settle: idsArb }),
      fc.record({ hold: jobsArb.map((js) => js.map((j) => ({ ...j, id: `held-${j.id}` }))) }),
      fc.record({ handOver: idsArb.map((is) => is.map((i) => `held-${i}`)) }),
      // Published on a bus that can lose records: kept at a position (here the event id, for `covers`) until acknowledged.
      fc.record({ handOverAt: idsArb.map((is) => is.map((i) => `held-${i}`)) }),
      fc.record({ acknowledge: idsArb.map((is) => is.map((i) => `held-${i}`)) }),
    );
    const positionOf = (id: string): BusPosition => ({ epoch: 'ēpoch-1', partition: id.length % 3, offset: id });
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), fc.nat(), fc.nat(), (ops, restartAt, tornBytes) => {
        const dir = tmpDir();
        const owed = new Map<string, CallbackJob>();
        const held = new Map<string, CallbackJob>();
        const kept = new Map<string, KeptJob>();
        // Settled since the start, across restarts (fewer than the outbox keeps): owing one again is a repeat, dropped.
        const settled = new Set<string>();
        const open = () => openCallbackOutbox({ dir, log, compactBytes: 600, recentlySettled: 100 });
        let outbox = open();
        const restart = ops.length === 0 ? -1 : restartAt % ops.length;
        ops.forEach((op, i) => {
          if ('owe' in op) {
            // Owing a job already owed in memory is a bus record delivered twice: it is kept once, as it was.
            const jobs = op.owe.map((p) => jobOf(p.id, p.content));
            outbox.owe(jobs);
            for (const j of jobs) if (!owed.has(j.eventId) && !settled.has(j.eventId)) owed.set(j.eventId, j);
          } else if ('retry' in op) {
            for (const id of op.retry) {
              const before = owed.get(id);
              if (!before) continue;
              const next = { ...before, attempt: op.attempt, notBefore: before.createdAt + op.attempt * 1000 };
              outbox.retry(next);
              owed.set(id, next);
            }
          } else if ('settle' in op) {
            outbox.settle(op.settle);
            for (const id of op.settle) if (owed.delete(id)) settled.add(id);
          } else if ('hold' in op) {
            const jobs = op.hold.map((p) => jobOf(p.id, p.content));
            outbox.hold(jobs);
            for (const j of jobs) {
              held.set(j.eventId, j);
              kept.delete(j.eventId);
            }
          } else if ('handOverAt' in op) {
            const current = [...new Set(op.handOverAt)].map((id) => held.get(id)).filter((j) => j !== undefined);
            outbox.handOver(
              current,
              current.map((j) => positionOf(j.eventId)),
            );
            for (const j of current) {
              held.delete(j.eventId);
              kept.set(j.eventId, { job: j, position: positionOf(j.eventId) });
            }
          } else if ('acknowledge' in op) {
            const dropped = outbox.acknowledged({ covers: (p) => op.acknowledge.includes(p.offset) });
            expect(dropped).toBe([...kept.keys()].filter((id) => op.acknowledge.includes(id)).length);
            for (const id of op.acknowledge) kept.delete(id);
          } else {
            const current = op.handOver.map((id) => held.get(id)).filter((j) => j !== undefined);
            // A copy is not the object that was held: it is not handed over.
            outbox.handOver([...current.filter((_, k) => k % 2 === 0), ...current.filter((_, k) => k % 2 === 1).map((j) => ({ ...j }))]);
            current.forEach((j, k) => {
              k % 2 === 0 && held.delete(j.eventId);
            });
          }
          if (i === restart) {
            // kill -9 (the descriptor's closing changes nothing on disk), and the next write was torn part-way.
            outbox.close();
            const next = encodeOwed([jobOf('torn', 'половина 半分 ½')]);
            fs.appendFileSync(path.join(dir, 'outbox.ndjson'), next.subarray(0, tornBytes % next.length));
            outbox = open();
            // What was held and never handed over is owed by this core now.
            for (const [id, j] of held) if (!owed.has(id)) owed.set(id, j);
            held.clear();
            expect(outbox.owed()).toEqual([...owed.values()]);
            // What was published stays kept, for its producer: the consumer's outbox owes it, not this one.
            expect(outbox.unacknowledged()).toEqual([...kept.values()]);
          }
        });
        expect(outbox.owed()).toEqual([...owed.values()]);
        expect(outbox.unacknowledged()).toEqual([...kept.values()]);
        expect(outbox.size).toBe(owed.size + held.size);
        outbox.close();
        const reopened = open();
        for (const [id, j] of held) if (!owed.has(id)) owed.set(id, j);
        expect(reopened.owed()).toEqual([...owed.values()]);
        expect(reopened.unacknowledged()).toEqual([...kept.values()]);
        reopened.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }),
      { numRuns: 150 },
    );
  });

  it('replays the bare published line of an older journal as a job no longer kept, and one kept at a position until acknowledged', () => {
    const job = jobOf('e-1', 'Kia ora, e hoa mā 👋🏽 你好');
    const old = replayOutbox(Buffer.concat([encodePending([job]), encodePublished(['e-1'])]));
    expect([old.pending.size, old.kept.size]).toEqual([0, 0]);
    const position = { epoch: '9f3c', partition: 1, offset: '1700000000000-7' };
    const kept = Buffer.concat([encodePending([job]), Buffer.from(`pe-1 9f3c 1 1700000000000-7\n`)]);
    expect(replayOutbox(kept).kept.get('e-1')).toEqual({ job, position });
    expect(replayOutbox(kept).pending.size).toBe(0);
    // Acknowledged: the same bare line as an older journal's.
    expect(replayOutbox(Buffer.concat([kept, encodePublished(['e-1'])])).kept.size).toBe(0);
    // Held again to be published again: held, no longer kept.
    const again = replayOutbox(Buffer.concat([kept, encodePending([job])]));
    expect([again.pending.size, again.kept.size]).toEqual([1, 0]);
  });

  it('does not count a job kept until acknowledged as owed, which the outbox of the core that took it counts', () => {
    const dir = tmpDir();
    const outbox = openCallbackOutbox({ dir, log });
    const jobs = [jobOf('a', 'Tēnā koe'), jobOf('b', '🌿')];
    outbox.hold(jobs);
    expect([outbox.size, outbox.owedByApplication().get('acme')]).toEqual([2, 2]);
    outbox.handOver(jobs, [
      { epoch: 'e', partition: 0, offset: '1-0' },
      { epoch: 'e', partition: 1, offset: '2-0' },
    ]);
    expect([outbox.size, outbox.owedByApplication().get('acme')]).toEqual([0, undefined]);
    expect(outbox.unacknowledged().map((k) => k.job)).toEqual(jobs);
    expect(outbox.acknowledged({ covers: (p) => p.partition === 1 })).toBe(1);
    expect(outbox.unacknowledged().map((k) => k.job.eventId)).toEqual(['a']);
    outbox.close();
  });

  it('shows how many published callbacks it keeps until acknowledged, for an SRE to see senders falling behind', async () => {
    const unacknowledgedNow = async () => (await callbacksUnacknowledged.get()).values[0]?.value;
    const outbox = openCallbackOutbox({ dir: tmpDir(), log });
    const jobs = [jobOf('a', 'Kia ora 👋🏽'), jobOf('b', '你好')];
    outbox.hold(jobs);
    outbox.handOver(jobs, [
      { epoch: 'e', partition: 0, offset: '1-0' },
      { epoch: 'e', partition: 1, offset: '2-0' },
    ]);
    expect(await unacknowledgedNow()).toBe(2);
    outbox.acknowledged({ covers: (p) => p.partition === 0 });
    expect(await unacknowledgedNow()).toBe(1);
    outbox.close();
  });

  it('does not grow without bound while jobs are settled as fast as they are owed', () => {
    const dir = tmpDir();
    const outbox = openCallbackOutbox({ dir, log, compactBytes: 64 * 1024 });
    let largest = 0;
    for (let i = 0; i < 20_000; i++) {
      const job = jobOf(`e${i}`, 'Kia ora, e hoa mā — tēnā koe 👋🏽');
      outbox.owe([job]);
      if (i >= 10) outbox.settle([`e${i - 10}`]);
      largest = Math.max(largest, fs.statSync(path.join(dir, 'outbox.ndjson')).size);
    }
    expect(outbox.size).toBe(10);
    expect(largest).toBeLessThan(128 * 1024);
    outbox.close();
  });

  it('drops a job owed again after it was settled, in the same run and after a restart and a compaction, as the same event told twice', () => {
    const dir = tmpDir();
    const frozen = jobOf('im-frozen-1', 'Kua whakatiotiotia — 冻结 🧊');
    let outbox = openCallbackOutbox({ dir, log });
    outbox.owe([frozen]);
    outbox.settle([frozen.eventId]);
    // A bus record delivered again after its callback was answered.
    outbox.owe([frozen]);
    expect(outbox.owed()).toEqual([]);
    outbox.close();

    // An IM message's resumption tells its attempt's outcome again: it was answered before the stop.
    outbox = openCallbackOutbox({ dir, log });
    outbox.owe([frozen, jobOf('im-failed-1', 'Kāore i tae — 失败')]);
    expect(outbox.owed().map((j) => j.eventId)).toEqual(['im-failed-1']);
    outbox.close();

    // Compaction writes the settled ids again: still known after it.
    outbox = openCallbackOutbox({ dir, log, compactBytes: 1, recentlySettled: 10 });
    outbox.settle(['im-failed-1']);
    outbox.close();
    outbox = openCallbackOutbox({ dir, log, compactBytes: 1, recentlySettled: 10 });
    outbox.owe([frozen, jobOf('im-failed-1', 'Kāore i tae — 失败'), jobOf('im-new', 'Hou 🆕')]);
    expect(outbox.owed().map((j) => j.eventId)).toEqual(['im-new']);
    outbox.close();
  });

  it('keeps only the latest settled ids it is asked to, so an event settled long ago may be owed anew', () => {
    const dir = tmpDir();
    const outbox = openCallbackOutbox({ dir, log, recentlySettled: 2 });
    const jobs = ['a', 'b', 'c'].map((id) => jobOf(id, `Tēnā koe ${id} 👋🏽`));
    outbox.owe(jobs);
    outbox.settle(['a', 'b', 'c']);
    outbox.owe(jobs);
    expect(outbox.owed().map((j) => j.eventId)).toEqual(['a']);
    outbox.close();
  });
});
