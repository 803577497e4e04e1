import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChdbHistory } from '../adapters/chdb-history';
import { message } from '../adapters/history-contract';
import type { MessageRecord } from '../ports/message-history';
import type { EncodedHistory } from './encoded-history';
import { campaignMessageId, campaignMessageRange } from '../campaigns/campaign-message-ids';
import { dateTime64, eventRow, jsonEachRow, messageRow, parseJsonCompactEachRow, parseJsonEachRow } from './rows';

/** Text people send: any code point, whole graphemes, and the scripts our users write in. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉', 'line one\nline two', 'tab\there "quoted" \\ back'),
);

const record: fc.Arbitrary<Partial<MessageRecord>> = fc.record({
  content: text,
  source: text,
  reference: text,
  mask: text,
  acceptedAt: fc.integer({ min: 0, max: 4_102_444_800_000 }), // to 2100
});

describe('history rows (property)', () => {
  it('encode a message in any script as one JSONEachRow line that decodes to the same row', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 5 }), (overrides) => {
        const messages = overrides.map((o) => message(o));
        const encoded = jsonEachRow(messages, messageRow).toString('utf8');
        // One line per row: the journal and the engine both split on newlines.
        expect(encoded.split('\n')).toHaveLength(messages.length + 1);
        expect(parseJsonEachRow(encoded)).toEqual(messages.map(messageRow));
      }),
    );
  });

  it('encode an event detail in any script as one line that decodes to the same row', () => {
    fc.assert(
      fc.property(text, text, (detail, errorCode) => {
        const row = eventRow({ messageId: 'm', applicationId: 'a', status: 'failed', at: 0, detail, carrierId: '', errorCode });
        const line = JSON.stringify(row);
        expect(line).not.toContain('\n');
        expect(parseJsonEachRow(line + '\n')).toEqual([row]);
      }),
    );
  });

  it('read a block of compact rows in any script back to the same columns, one row per line', () => {
    const cell = fc.oneof(text, fc.integer(), fc.constant(null), fc.array(text, { maxLength: 3 }));
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 1, maxLength: 5 }), { maxLength: 6 }), (rows) => {
        const block = rows.map((r) => JSON.stringify(r) + '\n').join('');
        expect(parseJsonCompactEachRow(block)).toEqual(rows);
      }),
    );
  });

  it('write any time as UTC DateTime64 text that reads back to the same millisecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), fc.integer({ min: 0, max: 253_402_300_799_999 }), (a, b) => {
        // Twice: the last value is cached.
        // Twice, then interleaved with 0 and a neighbour in the same second, as a message row's scheduled and accepted times are.
        for (const ms of [a, a, b, 0, a, a - (a % 1000), b, 0]) expect(Date.parse(dateTime64(ms).replace(' ', 'T') + 'Z')).toBe(ms);
        expect(dateTime64(a)).toBe(new Date(a).toISOString().replace('T', ' ').slice(0, 23));
      }),
    );
  });
});

describe('history rows through the engine (property)', () => {
  let dataDir: string;
  let history: EncodedHistory;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-rows-'));
    history = await createChdbHistory({ dataDir });
  });
  afterAll(async () => {
    await history?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('reads back a message in any script exactly as it was written', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 4 }), async (overrides) => {
        const messages = overrides.map((o) => message(o));
        await history.insertEncoded(messages.map((m) => JSON.stringify(messageRow(m))).join('\n'), '');
        for (const m of messages) {
          const stored = await history.getMessage(m.applicationId, m.id);
          expect(stored).toMatchObject({ content: m.content, source: m.source, reference: m.reference, mask: m.mask, acceptedAt: m.acceptedAt });
        }
      }),
      { numRuns: 30 },
    );
  }, 120_000);

  let campaignId = 9_000;
  it("streams a campaign's report with every mobile in any script exactly as it was written", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 4 }), async (mobiles) => {
        campaignId += 1;
        const messages = mobiles.map((destination, p) => message({ id: campaignMessageId(campaignId, p), destination }));
        await history.insertEncoded(messages.map((m) => JSON.stringify(messageRow(m))).join('\n'), '');
        const { lo, hi } = campaignMessageRange(campaignId, 0, mobiles.length);
        const read: string[] = [];
        for await (const rows of history.campaigns.reportRows(lo, hi)) for (const r of rows) read.push(r.mobile);
        expect(read).toEqual(mobiles);
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});
