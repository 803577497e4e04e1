import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBatch, piecesAfter, readJournalLines } from './journal-lines';

/** A batch in the journal's line format, its pieces joined. */
const encodeJournalBatch = (messages: string[], events: string[]): Buffer => Buffer.concat(encodeBatch(messages, events).journal);

/** Rows as the history tables take them: one JSON object a line, with text in any script. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉'),
);
const rows = fc.array(
  text.map((content) => JSON.stringify({ content })),
  { maxLength: 6 },
);
const batches = fc.array(fc.record({ messages: rows, events: rows }), { maxLength: 6 });

describe('journal lines', () => {
  it('read back every row of every batch, in order, whatever its script', () => {
    fc.assert(
      fc.property(batches, (bs) => {
        const journal = Buffer.concat(bs.map((b) => encodeJournalBatch(b.messages, b.events)));
        const read = readJournalLines(journal, 0);
        expect(read).toEqual({ messages: bs.flatMap((b) => b.messages), events: bs.flatMap((b) => b.events), damaged: [], tornBytes: 0 });
      }),
    );
  });

  it('read from a checkpoint byte offset exactly the rows of the batches after it', () => {
    fc.assert(
      fc.property(batches, fc.nat(), (bs, pick) => {
        const encoded = bs.map((b) => encodeJournalBatch(b.messages, b.events));
        const at = pick % (bs.length + 1);
        const offset = Buffer.concat(encoded.slice(0, at)).length;
        const read = readJournalLines(Buffer.concat(encoded), offset);
        expect(read.messages).toEqual(bs.slice(at).flatMap((b) => b.messages));
        expect(read.events).toEqual(bs.slice(at).flatMap((b) => b.events));
      }),
    );
  });

  it('leave out a last line cut at any byte, even inside a character, and keep every whole line before it', () => {
    fc.assert(
      fc.property(
        rows.filter((r) => r.length > 0),
        fc.nat(),
        (messages, cutAt) => {
          const bytes = encodeJournalBatch(messages, []);
          const cut = cutAt % bytes.length;
          const read = readJournalLines(bytes.subarray(0, cut), 0);
          const whole = bytes
            .subarray(0, cut)
            .toString('utf8')
            .split('\n')
            .slice(0, -1)
            .map((l) => l.slice(1));
          expect(read.messages).toEqual(whole);
          expect(read.damaged).toEqual([]);
          expect(read.tornBytes).toBe(cut - Buffer.byteLength(whole.map((w) => `M${w}\n`).join('')));
        },
      ),
    );
  });

  it('set aside a line damaged anywhere, by its byte offset, and read the lines around it', () => {
    fc.assert(
      fc.property(rows, rows, fc.uint8Array({ minLength: 1, maxLength: 20 }), (before, after, noise) => {
        // Noise without newlines, starting with a byte that no journal line starts with.
        const bad = Buffer.from([0x00, ...noise.filter((b) => b !== 0x0a)]);
        const head = encodeJournalBatch(before, []);
        const journal = Buffer.concat([head, bad, Buffer.from('\n'), encodeJournalBatch(after, [])]);
        const read = readJournalLines(journal, 0);
        expect(read.messages).toEqual([...before, ...after]);
        expect(read.damaged.map((d) => ({ offset: d.offset, bytes: Buffer.from(d.bytes) }))).toEqual([{ offset: head.length, bytes: bad }]);
      }),
    );
  });

  it('tell apart why a line is damaged', () => {
    const journal = Buffer.concat([
      Buffer.from('M{"content":"Kia ora, e hoa m'),
      Buffer.from([0xc4]),
      Buffer.from('"}\n'), // a macron cut in half
      Buffer.from('M{"content":"Привет"\n'), // a row cut short, then a newline from the next write
      Buffer.from('X{"content":"你好世界"}\n'),
      Buffer.from('{"neither":"👋🏽🎉"}\n'),
    ]);
    expect(readJournalLines(journal, 0).damaged.map((d) => d.reason)).toEqual(['not_utf8', 'not_json', 'unknown_kind', 'unknown_kind']);
  });

  it('read the earlier {"m":…} / {"e":…} lines as rows', () => {
    const m = {
      id: 'm1',
      numericId: 1,
      replyTo: '',
      applicationId: 'a',
      channel: 'sms',
      direction: 'MT' as const,
      destination: '+64211234567',
      source: 'Hermod',
      content: 'Kia ora, e hoa mā — tēnā koe',
      reference: '',
      messageClass: '',
      mask: '',
      smsClass: 0,
      scheduledAt: 0,
      integrationId: '',
      via: 'sms_v2',
      segments: 1,
      acceptedAt: 0,
    };
    const read = readJournalLines(Buffer.from(JSON.stringify({ m }) + '\n'), 0);
    expect(read.messages).toHaveLength(1);
    expect(JSON.parse(read.messages[0]!)).toMatchObject({ id: 'm1', content: 'Kia ora, e hoa mā — tēnā koe' });
  });
  it('encode a batch of any size once: the journal lines are the engine rows with their kind in front, in pieces of at most 64 rows', () => {
    const many = fc.array(
      text.map((content) => JSON.stringify({ content })),
      { maxLength: 300 },
    );
    fc.assert(
      fc.property(many, many, (messages, events) => {
        const batch = encodeBatch(messages, events);
        expect(Buffer.concat(batch.messages).toString('utf8')).toBe(messages.map((r) => `${r}\n`).join(''));
        expect(Buffer.concat(batch.events).toString('utf8')).toBe(events.map((r) => `${r}\n`).join(''));
        expect(Buffer.concat(batch.journal).toString('utf8')).toBe([...events.map((r) => `E${r}\n`), ...messages.map((r) => `M${r}\n`)].join(''));
        const rowsIn = (pieces: Buffer[]): number[] => pieces.map((b) => b.toString('utf8').split('\n').length - 1);
        expect(rowsIn(batch.journal)).toEqual([...rowsIn(batch.events), ...rowsIn(batch.messages)]);
        expect(Math.max(0, ...rowsIn(batch.journal))).toBeLessThanOrEqual(64);
        expect(readJournalLines(Buffer.concat(batch.journal), 0)).toEqual({ messages, events, damaged: [], tornBytes: 0 });
      }),
    );
  });

  it('carry on a write that took only part of a batch with exactly the bytes it left', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 8 }), fc.nat(), (arrays, pick) => {
        const pieces = arrays.map((a) => Buffer.from(a));
        const whole = Buffer.concat(pieces);
        const skip = pick % (whole.length + 1);
        const rest = piecesAfter(pieces, skip);
        expect(Buffer.concat(rest)).toEqual(whole.subarray(skip));
        expect(rest.every((b) => b.length > 0)).toBe(true);
      }),
    );
  });
});
