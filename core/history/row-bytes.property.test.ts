import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MessageRecord, StatusEvent } from '../ports/message-history';
import { MESSAGE_STATUSES } from '../domain/message-status';
import { encodeBatch, encodeRecords } from './journal-lines';
import { eventRow, messageRow } from './rows';

/** Any UTF-16 code unit: lone surrogates, controls, quotes and backslashes included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const text = fc.oneof(
  fc.string({ unit: codeUnit, maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', 'Kia ora, e hoa mā — tēnā koe', '你好世界', '👋🏽🎉', 'line one\nline two', 'tab\there "quoted" \\ back', '\u2028\u2029\u007f'),
  // The edges of UTF-8's lengths and of surrogate pairs, whole and lone.
  fc.constantFrom('\u007f\u0080\u07ff\u0800\uffff', '\ud800\udc00', '\udbff\udfff', '\ud83d', '\udfff', 'a\ud800', '\ud800\ud800\udc00', '\udc00\ud800'),
);
const count = fc.oneof(fc.integer(), fc.nat({ max: 2 ** 53 - 1 }), fc.double(), fc.constantFrom(0, -0, 1e15, 1e21, Number.NaN, Number.POSITIVE_INFINITY));
// From the year 1 to 2100, fractions of a millisecond and the epoch itself included.
const time = fc.oneof(
  fc.integer({ min: -62_135_596_800_000, max: 4_102_444_800_000 }),
  fc.double({ min: -1e12, max: 4e12, noNaN: true }),
  fc.constantFrom(0, 999, 1000, -1, -1000),
);

const message: fc.Arbitrary<MessageRecord> = fc.record(
  {
    id: text,
    numericId: count,
    applicationId: text,
    channel: text,
    direction: fc.constantFrom('MT', 'MO'),
    destination: text,
    source: text,
    content: text,
    reference: text,
    messageClass: text,
    mask: text,
    smsClass: count,
    scheduledAt: time,
    integrationId: text,
    via: text,
    segments: count,
    acceptedAt: time,
    replyTo: text,
    replyRoute: text,
  },
  { requiredKeys: ['id', 'applicationId', 'scheduledAt', 'acceptedAt'] },
) as fc.Arbitrary<MessageRecord>;

const event: fc.Arbitrary<StatusEvent> = fc.record({
  messageId: text,
  applicationId: text,
  status: fc.constantFrom(...MESSAGE_STATUSES),
  at: time,
  detail: text,
  carrierId: text,
  errorCode: text,
});

describe('history rows written as bytes (property)', () => {
  it('are the same for rows whose application, status and second repeat, and for rows of many applications', () => {
    // The writer keeps repeated values' bytes and a second's date: rows sharing them, and more values than it keeps.
    const shared = fc.record({
      app: fc.constantFrom('0190f1c2-7b3a-7000-8000-000000000001', 'Kāinga', '你好'),
      at: fc.integer({ min: 1_700_000_000_000, max: 1_700_000_003_000 }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(event, shared, fc.boolean()), { maxLength: 400 }),
        fc.array(fc.string({ maxLength: 4 }), { minLength: 300, maxLength: 600 }),
        (rows, apps) => {
          const events = rows.map(([e, s, same], i) => ({ ...e, applicationId: same ? s.app : apps[i % apps.length]!, at: s.at }));
          const written = encodeRecords([], events);
          const stringified = encodeBatch(
            [],
            events.map((e) => JSON.stringify(eventRow(e))),
          );
          expect(Buffer.concat(written.journal).equals(Buffer.concat(stringified.journal))).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('are byte for byte the JSON of rows.ts, for records in any script, with any numbers and fields left out', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 150 }), fc.array(event, { maxLength: 150 }), (messages, events) => {
        const written = encodeRecords(messages, events);
        const stringified = encodeBatch(
          messages.map((m) => JSON.stringify(messageRow(m))),
          events.map((e) => JSON.stringify(eventRow(e))),
        );
        expect(Buffer.concat(written.journal).toString('latin1')).toBe(Buffer.concat(stringified.journal).toString('latin1'));
        expect(Buffer.concat(written.messages).equals(Buffer.concat(stringified.messages))).toBe(true);
        expect(Buffer.concat(written.events).equals(Buffer.concat(stringified.events))).toBe(true);
        // Pieces of at most 64 rows, as the journal writes and keeps them.
        expect(written.events.map((p) => p.length)).toEqual(stringified.events.map((p) => p.length));
      }),
      { numRuns: 500 },
    );
  });
});
