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
);
const count = fc.oneof(fc.integer(), fc.nat({ max: 2 ** 53 - 1 }), fc.double(), fc.constantFrom(0, -0, 1e15, 1e21, Number.NaN, Number.POSITIVE_INFINITY));
const time = fc.integer({ min: 0, max: 4_102_444_800_000 });

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
      { numRuns: 300 },
    );
  });
});
