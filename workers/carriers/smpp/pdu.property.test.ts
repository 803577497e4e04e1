import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CommandId } from './command-id';
import { FrameDecoder } from './frame-decoder';
import { type DataSmPdu, decodePdu, PduError, type QuerySmPdu, type QuerySmRespPdu, writePdu, type Pdu, type SmPdu } from './pdu';
import { PduWriter } from './pdu-writer';

const encode = (pdu: Pdu): Buffer => {
  const w = new PduWriter(32);
  writePdu(w, pdu);
  return w.take();
};

/** A C-octet string field: printable ASCII as SMSCs expect, up to `max` characters. */
const cString = (max: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: max });
const u8 = fc.integer({ min: 0, max: 255 });
const tlv = fc.record({ tag: fc.integer({ min: 0x1400, max: 0x3fff }), value: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) });

const smPdu: fc.Arbitrary<SmPdu> = fc.record({
  commandId: fc.constantFrom(CommandId.submit_sm, CommandId.deliver_sm),
  commandStatus: fc.constant(0),
  sequenceNumber: fc.integer({ min: 1, max: 0x7fffffff }),
  serviceType: cString(5),
  sourceAddrTon: u8,
  sourceAddrNpi: u8,
  sourceAddr: cString(20),
  destAddrTon: u8,
  destAddrNpi: u8,
  destinationAddr: cString(20),
  esmClass: u8,
  protocolId: u8,
  priorityFlag: u8,
  scheduleDeliveryTime: fc.constantFrom('', '261124090000000+'),
  validityPeriod: fc.constantFrom('', '000001000000000R'),
  registeredDelivery: u8,
  replaceIfPresentFlag: u8,
  dataCoding: u8,
  smDefaultMsgId: u8,
  shortMessage: fc.uint8Array({ maxLength: 254 }).map((a) => Buffer.from(a)),
  tlvs: fc.array(tlv, { maxLength: 4 }),
});

const dataSmPdu: fc.Arbitrary<DataSmPdu> = fc.record({
  commandId: fc.constant(CommandId.data_sm),
  commandStatus: fc.constant(0),
  sequenceNumber: fc.integer({ min: 1, max: 0x7fffffff }),
  serviceType: cString(5),
  sourceAddrTon: u8,
  sourceAddrNpi: u8,
  sourceAddr: cString(64),
  destAddrTon: u8,
  destAddrNpi: u8,
  destinationAddr: cString(64),
  esmClass: u8,
  registeredDelivery: u8,
  dataCoding: u8,
  tlvs: fc.array(tlv, { maxLength: 4 }),
});

const queryPdu: fc.Arbitrary<QuerySmPdu | QuerySmRespPdu> = fc.oneof(
  fc.record({
    commandId: fc.constant(CommandId.query_sm),
    commandStatus: fc.constant(0),
    sequenceNumber: fc.integer({ min: 1, max: 0x7fffffff }),
    messageId: cString(64),
    sourceAddrTon: u8,
    sourceAddrNpi: u8,
    sourceAddr: cString(20),
  }),
  fc.record({
    commandId: fc.constant(CommandId.query_sm_resp),
    commandStatus: fc.constant(0),
    sequenceNumber: fc.integer({ min: 1, max: 0x7fffffff }),
    messageId: cString(64),
    // YYMMDDhhmmsstnnp, or empty while the message is not final.
    finalDate: fc.oneof(
      fc.constant(''),
      fc
        .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
        .map((d) => `${d.toISOString().replace(/[-:T]/g, '').slice(2, 14)}${Math.floor(d.getUTCMilliseconds() / 100)}00+`),
    ),
    messageState: fc.integer({ min: 1, max: 8 }),
    errorCode: u8,
  }),
);

const plain = (pdu: Pdu): unknown =>
  JSON.parse(
    JSON.stringify(pdu, (_k, v: unknown) =>
      v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' ? Buffer.from((v as { data: number[] }).data).toString('hex') : v,
    ),
  );

describe('SMPP PDU codec (property)', () => {
  it('decodes every submit_sm and deliver_sm it encodes to the same PDU', () => {
    fc.assert(
      fc.property(smPdu, (pdu) => {
        expect(plain(decodePdu(encode(pdu)))).toEqual(plain(pdu));
      }),
      { numRuns: 300 },
    );
  });

  it('decodes every data_sm it encodes to the same PDU, with addresses up to data_sm’s 64 characters', () => {
    fc.assert(
      fc.property(dataSmPdu, (pdu) => {
        expect(plain(decodePdu(encode(pdu)))).toEqual(plain(pdu));
      }),
      { numRuns: 300 },
    );
  });

  it('decodes every query_sm and query_sm_resp it encodes to the same PDU', () => {
    fc.assert(
      fc.property(queryPdu, (pdu) => {
        expect(decodePdu(encode(pdu))).toEqual(pdu);
      }),
      { numRuns: 300 },
    );
  });

  it('cuts any stream of PDUs, however it is split into TCP chunks, into the same frames', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(smPdu, dataSmPdu, queryPdu), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 20 }),
        (pdus, cuts) => {
          const stream = Buffer.concat(pdus.map(encode));
          const frames: Buffer[] = [];
          const decoder = new FrameDecoder();
          let off = 0;
          for (let i = 0; off < stream.length; i++) {
            const size = cuts[i % cuts.length]!;
            decoder.push(stream.subarray(off, off + size), (f) => frames.push(Buffer.from(f)));
            off += size;
          }
          expect(frames.map((f) => plain(decodePdu(f)))).toEqual(pdus.map(plain));
          expect(decoder.buffered).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('either round-trips a C-octet string exactly or refuses it: never writes a macron, an emoji or a NUL as some other byte', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 12 }), (source) => {
        const pdu: SmPdu = {
          commandId: CommandId.submit_sm,
          commandStatus: 0,
          sequenceNumber: 1,
          sourceAddr: source,
          destinationAddr: '6421000001',
          esmClass: 0,
          registeredDelivery: 1,
          dataCoding: 0,
          shortMessage: Buffer.alloc(0),
          tlvs: [],
        };
        let bytes: Buffer;
        try {
          bytes = encode(pdu);
        } catch (err) {
          expect(err).toBeInstanceOf(PduError);
          return;
        }
        expect((decodePdu(bytes) as SmPdu).sourceAddr).toBe(source);
      }),
      { numRuns: 500, examples: [['Māori'], ['Kai\0ora'], ['👋🏽']] },
    );
  });

  it('never throws anything but PduError on arbitrary bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 300 }),
        fc.constantFrom(
          CommandId.submit_sm,
          CommandId.deliver_sm,
          CommandId.submit_sm_resp,
          CommandId.bind_transceiver,
          CommandId.query_sm,
          CommandId.query_sm_resp,
        ),
        (body, commandId) => {
          const frame = Buffer.from(body);
          frame.writeUInt32BE(frame.length, 0);
          frame.writeUInt32BE(commandId, 4);
          try {
            decodePdu(frame);
          } catch (err) {
            expect(err).toBeInstanceOf(PduError);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
