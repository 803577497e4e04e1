import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { register } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createJournaledHistory } from './journaled-history';
import { crashImage, journalBatch, recordingHistory, recordingLogger, segmentFiles } from './journal-test-support';

/**
 * The journal's checkpoint is a byte offset; rows hold whatever people write.
 * These open a journal, flush part of it, "crash" (a copy of the directory at
 * that instant) and open the copy again, checking what replay hands the engine.
 */

const SAMPLES = {
  'te reo Māori': 'Kia ora, e hoa mā — tēnā koe',
  Cyrillic: 'Привет, как дела?',
  CJK: '你好世界，今天天气很好',
  emoji: '👋🏽🎉 see you soon 👨‍👩‍👧',
};

const HOUR = 60 * 60 * 1000;
const dirs: string[] = [];
const tmp = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-unicode-'));
  dirs.push(d);
  return d;
};
const row = (id: string, content: string): string => JSON.stringify({ id, content });
const damagedCount = async (): Promise<number> => {
  const metric = register.getSingleMetric('hermod_journal_damaged_lines_total');
  if (!metric) return 0;
  return (await metric.get()).values.reduce((sum, v) => sum + v.value, 0);
};

afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Opens a journal over `dir`, runs `work`, takes the crash image, and closes the original. */
async function crashAfter(dir: string, work: (j: Awaited<ReturnType<typeof createJournaledHistory>>) => Promise<void>, segmentBytes?: number): Promise<string> {
  const inner = recordingHistory();
  const journal = await createJournaledHistory({ inner: inner.history, dir, log: recordingLogger(), flushIntervalMs: HOUR, segmentBytes });
  await work(journal);
  const image = crashImage(dir);
  dirs.push(image);
  await journal.close();
  return image;
}

async function reopen(dir: string) {
  const inner = recordingHistory();
  const log = recordingLogger();
  const journal = await createJournaledHistory({ inner: inner.history, dir, log, flushIntervalMs: HOUR });
  await journal.close();
  return { inner, log };
}

describe('journal replay after a crash, with text that is not ASCII', () => {
  for (const [language, text] of Object.entries(SAMPLES)) {
    it(`replays every message accepted after the last flush when earlier messages were in ${language}`, async () => {
      const dir = tmp();
      const image = await crashAfter(dir, async (j) => {
        await j.insertEncoded([row('before-1', text), row('before-2', text), row('before-3', text)].join('\n'), row('ev-before', text));
        await j.flush();
        await j.insertEncoded([row('after-1', text), row('after-2', `${text} ${text}`)].join('\n'), row('ev-after', text));
        await j.insertEncoded(row('after-3', 'plain ascii'), '');
      });
      const { inner } = await reopen(image);
      expect(inner.messages).toEqual([row('after-1', text), row('after-2', `${text} ${text}`), row('after-3', 'plain ascii')]);
      expect(inner.events).toEqual([row('ev-after', text)]);
    });
  }

  it('replays the rows of the segment after a roll, and of the rolled segment past its checkpoint, whatever their scripts', async () => {
    const dir = tmp();
    const image = await crashAfter(
      dir,
      async (j) => {
        await j.insertEncoded(row('a', SAMPLES['te reo Māori']), '');
        await j.flush();
        await j.insertEncoded(row('b', SAMPLES.CJK), ''); // still in the first segment (it rolls once past 40 bytes)
        await j.insertEncoded(row('c', SAMPLES.emoji), ''); // the second segment
        await j.flush();
        await j.insertEncoded(row('d', SAMPLES.Cyrillic), ''); // a third segment: the checkpoint stays in the second
        await j.insertEncoded(row('e', SAMPLES['te reo Māori']), '');
      },
      40,
    );
    const { inner } = await reopen(image);
    expect(inner.messages).toEqual([row('d', SAMPLES.Cyrillic), row('e', SAMPLES['te reo Māori'])]);
  });

  it('leaves out a last line torn in the middle of a character, which was never acknowledged', async () => {
    const dir = tmp();
    const image = await crashAfter(dir, async (j) => {
      await j.insertEncoded(row('a', SAMPLES.emoji), '');
      await j.flush();
      await j.insertEncoded(row('b', SAMPLES.CJK), '');
    });
    const torn = journalBatch([row('c', SAMPLES.CJK)], []);
    const [last] = segmentFiles(image).slice(-1);
    // Cut inside the first CJK character's three bytes.
    fs.appendFileSync(path.join(image, last!), torn.subarray(0, torn.indexOf(Buffer.from('你')) + 2));
    const { inner, log } = await reopen(image);
    expect(inner.messages).toEqual([row('b', SAMPLES.CJK)]);
    expect(log.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([]);
  });

  it('logs and counts a damaged line with its segment and byte offset, and still replays the lines around it', async () => {
    const dir = tmp();
    fs.mkdirSync(dir, { recursive: true });
    const good1 = journalBatch([row('before', SAMPLES['te reo Māori'])], []);
    const damaged = Buffer.concat([Buffer.from('M{"id":"cut","content":"Kia ora, e hoa m'), Buffer.from([0xc4]), Buffer.from('\n')]);
    const garbage = Buffer.from('\u0000\u0000garbage from a bad sector\n');
    const good2 = journalBatch([row('after', SAMPLES.Cyrillic)], [row('ev', SAMPLES.emoji)]);
    fs.writeFileSync(path.join(dir, 'journal-0000000003.ndjson'), Buffer.concat([good1, damaged, garbage, good2]));
    const before = await damagedCount();

    const { inner, log } = await reopen(dir);

    expect(inner.messages).toEqual([row('before', SAMPLES['te reo Māori']), row('after', SAMPLES.Cyrillic)]);
    expect(inner.events).toEqual([row('ev', SAMPLES.emoji)]);
    expect(await damagedCount()).toBe(before + 2);
    const warnings = log.entries.filter((e) => e.level === 'warn' || e.level === 'error');
    expect(warnings.map((w) => w.fields)).toEqual([
      expect.objectContaining({ segment: 'journal-0000000003.ndjson', offset: good1.length }),
      expect.objectContaining({ segment: 'journal-0000000003.ndjson', offset: good1.length + damaged.length }),
    ]);
  });

  it('ignores a checkpoint write that died before its rename, and replays from the last checkpoint that was renamed into place', async () => {
    const dir = tmp();
    const image = await crashAfter(dir, async (j) => {
      await j.insertEncoded(row('a', SAMPLES.Cyrillic), '');
      await j.flush();
      await j.insertEncoded(row('b', SAMPLES.Cyrillic), '');
    });
    fs.writeFileSync(path.join(image, 'checkpoint.json.tmp'), '{"segment":99,"off');
    const { inner } = await reopen(image);
    expect(inner.messages).toEqual([row('b', SAMPLES.Cyrillic)]);
  });

  it('replays every journaled row, rather than losing any, when the checkpoint itself cannot be read', async () => {
    const dir = tmp();
    const image = await crashAfter(dir, async (j) => {
      await j.insertEncoded(row('a', SAMPLES.CJK), '');
      await j.flush();
      await j.insertEncoded(row('b', SAMPLES.CJK), '');
    });
    fs.writeFileSync(path.join(image, 'checkpoint.json'), '{"segment":2,"off');
    const { inner, log } = await reopen(image);
    expect(inner.messages).toEqual([row('a', SAMPLES.CJK), row('b', SAMPLES.CJK)]);
    expect(log.entries.some((e) => e.level === 'warn' && /checkpoint/.test(e.msg))).toBe(true);
  });

  it('replays nothing a second time once a replay has been stored', async () => {
    const dir = tmp();
    const image = await crashAfter(dir, async (j) => {
      await j.insertEncoded(row('a', SAMPLES.emoji), '');
      await j.flush();
      await j.insertEncoded(row('b', SAMPLES.emoji), '');
    });
    expect((await reopen(image)).inner.messages).toEqual([row('b', SAMPLES.emoji)]);
    expect((await reopen(image)).inner.messages).toEqual([]);
  });

  it('refuses a batch the disk would not take, and keeps the batches after it in a fresh segment', async () => {
    const dir = tmp();
    const inner = recordingHistory();
    const journal = await createJournaledHistory({ inner: inner.history, dir, log: recordingLogger(), flushIntervalMs: HOUR, segmentBytes: 10 });
    await journal.insertEncoded(row('a', SAMPLES.CJK), '');
    // The next segment is a disk that is always full (and cannot be cut back either).
    fs.symlinkSync('/dev/full', path.join(dir, 'journal-0000000002.ndjson'));
    await expect(journal.insertEncoded(row('b', SAMPLES.emoji), '')).rejects.toThrow(/ENOSPC/);
    await journal.insertEncoded(row('c', SAMPLES['te reo Māori']), '');
    await journal.flush();
    expect(inner.messages).toEqual([row('a', SAMPLES.CJK), row('c', SAMPLES['te reo Māori'])]);
    // (The flush already removed the full disk with the segments before its checkpoint; never replay from it.)
    fs.rmSync(path.join(dir, 'journal-0000000002.ndjson'), { force: true });
    await journal.close();
  });
});
