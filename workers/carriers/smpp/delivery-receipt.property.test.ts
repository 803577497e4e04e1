import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CommandId } from './command-id';
import { formatReceiptText, parseDeliveryReceipt, type ReceiptState } from './delivery-receipt';
import type { SmPdu } from './pdu';

const receipt = (shortMessage: Buffer, dataCoding = 0): SmPdu => ({
  commandId: CommandId.deliver_sm,
  commandStatus: 0,
  sequenceNumber: 1,
  sourceAddrTon: 1,
  sourceAddr: '64211234567',
  destAddrTon: 5,
  destinationAddr: 'Hermod',
  esmClass: 0x04,
  registeredDelivery: 0,
  dataCoding,
  shortMessage,
  tlvs: [],
});

const FINAL: ReceiptState[] = ['delivered', 'undeliverable', 'expired', 'rejected', 'deleted', 'unknown', 'accepted'];
const carrierId = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF-'.split('')), minLength: 1, maxLength: 64 });
const minute = fc.integer({ min: Date.UTC(2000, 0, 1) / 60_000, max: Date.UTC(2099, 11, 31) / 60_000 }).map((m) => m * 60_000);
/** The original message's first characters, as users write them, including text that looks like receipt fields. */
const original = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom('Kia ora, e hoa mā', 'Привет 👋🏽', '你好世界', 'id:evil stat:REJECTD err:999', 'done date:0001010000 stat:EXPIRED'),
);

describe('delivery receipt parser (property)', () => {
  it('reads back the id, state, error and done date of any appendix B receipt, whatever the original text held', () => {
    fc.assert(
      fc.property(
        carrierId,
        fc.constantFrom(...FINAL),
        minute,
        minute,
        fc.integer({ min: 0, max: 999 }),
        original,
        (id, state, submitDate, doneDate, err, text) => {
          const body = Buffer.from(formatReceiptText({ id, state, submitDate, doneDate, err: String(err).padStart(3, '0'), text }), 'latin1');
          const parsed = parseDeliveryReceipt(receipt(body));
          expect(parsed).toMatchObject({ carrierMessageId: id, state, errorCode: String(err).padStart(3, '0'), doneDate });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads a receipt written in UCS-2 as it reads the same receipt in Latin-1, whatever the original text held', () => {
    fc.assert(
      fc.property(
        carrierId,
        fc.constantFrom(...FINAL),
        minute,
        minute,
        fc.integer({ min: 0, max: 999 }),
        original,
        fc.constantFrom(0x08, 0x18, 0x19),
        (id, state, submitDate, doneDate, err, text, dataCoding) => {
          const latin1 = formatReceiptText({ id, state, submitDate, doneDate, err: String(err).padStart(3, '0'), text });
          // In UCS-2 the SMSC can copy the original's first characters as they were, not as `?`.
          const ucs2 = latin1.slice(0, latin1.indexOf(' text:') + 6) + text.slice(0, 20);
          const parsed = parseDeliveryReceipt(receipt(Buffer.from(ucs2, 'utf16le').swap16(), dataCoding));
          expect(parsed).toBeDefined();
          expect(parsed).toEqual(parseDeliveryReceipt(receipt(Buffer.from(latin1, 'latin1'))));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary bytes in short_message, in any data coding', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 254 }), fc.constantFrom(0x00, 0x03, 0x08, 0x18), (bytes, dataCoding) => {
        const parsed = parseDeliveryReceipt(receipt(Buffer.from(bytes), dataCoding));
        if (parsed) expect(parsed.carrierMessageId.length).toBeGreaterThan(0);
      }),
      { numRuns: 500 },
    );
  });
});
