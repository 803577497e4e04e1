import { describe, expect, it } from 'vitest';
import { CommandId } from './command-id';
import { formatReceiptText, isReceiptEsmClass, parseDeliveryReceipt, parseReceiptDate } from './delivery-receipt';
import type { SmPdu } from './pdu';
import { TlvTag, cStringTlv, uint8Tlv, type Tlv } from './tlv';

function receipt(text: string, tlvs: Tlv[] = [], dataCoding = 0): SmPdu {
  return {
    commandId: CommandId.deliver_sm,
    commandStatus: 0,
    sequenceNumber: 1,
    sourceAddr: '64211234567',
    destinationAddr: 'Hermod',
    esmClass: 0x04,
    registeredDelivery: 0,
    dataCoding,
    shortMessage: dataCoding === 8 ? utf16be(text) : Buffer.from(text, 'latin1'),
    tlvs,
  };
}

function utf16be(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

describe('delivery receipts', () => {
  it('reads id, stat, err and done date from the appendix B text', () => {
    const r = parseDeliveryReceipt(receipt('id:0a1b2c sub:001 dlvrd:001 submit date:2403151200 done date:2403151201 stat:DELIVRD err:000 text:hello'));
    expect(r).toEqual({
      carrierMessageId: '0a1b2c',
      idWrittenAs: 'receipt',
      state: 'delivered',
      errorCode: '000',
      doneDate: Date.UTC(2024, 2, 15, 12, 1),
      stat: 'DELIVRD',
      source: '64211234567',
      destination: 'Hermod',
    });
  });

  it('maps every stat word to a state', () => {
    const states = Object.fromEntries(
      ['DELIVRD', 'UNDELIV', 'EXPIRED', 'REJECTD', 'DELETED', 'ACCEPTD', 'UNKNOWN', 'ENROUTE'].map((stat) => [
        stat,
        parseDeliveryReceipt(receipt(`id:1 stat:${stat} err:001`))!.state,
      ]),
    );
    expect(states).toEqual({
      DELIVRD: 'delivered',
      UNDELIV: 'undeliverable',
      EXPIRED: 'expired',
      REJECTD: 'rejected',
      DELETED: 'deleted',
      ACCEPTD: 'accepted',
      UNKNOWN: 'unknown',
      ENROUTE: 'accepted',
    });
  });

  it('takes the intermediate words other SMSCs write (buffered, acknowledged) as not final, so a later DELIVRD still counts', () => {
    for (const stat of ['ACKED', 'BUFFRED', 'BUFFERD', 'BUFFERED', 'ENROUTE', 'ACCEPTD']) {
      expect(parseDeliveryReceipt(receipt(`id:1 stat:${stat} err:000`))!.state, stat).toBe('accepted');
    }
  });

  it('tells an id written as submit_sm_resp wrote it (the TLV, SMPP 3.4) from one written as the receipt text writes ids', () => {
    const tlv = (id: string) => [cStringTlv(TlvTag.receipted_message_id, id), uint8Tlv(TlvTag.message_state, 2)];
    expect(parseDeliveryReceipt(receipt('id:19088743 stat:DELIVRD', tlv('1234567')))).toMatchObject({ carrierMessageId: '1234567', idWrittenAs: 'submit' });
    expect(parseDeliveryReceipt(receipt('', tlv('1234567')))).toMatchObject({ carrierMessageId: '1234567', idWrittenAs: 'submit' });
    // The same id in both: the SMSC writes its receipts' id in the TLV too.
    expect(parseDeliveryReceipt(receipt('id:19088743 stat:DELIVRD', tlv('19088743')))).toMatchObject({ carrierMessageId: '19088743', idWrittenAs: 'receipt' });
    // The same id written with zeros before it, or in another case, in one of them.
    expect(parseDeliveryReceipt(receipt('id:0019088743 stat:DELIVRD', tlv('19088743')))).toMatchObject({ idWrittenAs: 'receipt' });
    expect(parseDeliveryReceipt(receipt('id:F426B stat:DELIVRD', tlv('000f426b')))).toMatchObject({ idWrittenAs: 'receipt' });
    expect(parseDeliveryReceipt(receipt('id:19088743 stat:DELIVRD'))).toMatchObject({ carrierMessageId: '19088743', idWrittenAs: 'receipt' });
  });

  it('lets receipted_message_id and message_state TLVs win over the text', () => {
    const r = parseDeliveryReceipt(
      receipt('id:999 stat:DELIVRD err:000 text:', [cStringTlv(TlvTag.receipted_message_id, 'abc'), uint8Tlv(TlvTag.message_state, 5)]),
    );
    expect(r).toMatchObject({ carrierMessageId: 'abc', state: 'undeliverable' });
  });

  it('works from TLVs alone and ignores look-alike words in the original text', () => {
    expect(parseDeliveryReceipt(receipt('', [cStringTlv(TlvTag.receipted_message_id, 'x1'), uint8Tlv(TlvTag.message_state, 3)]))).toMatchObject({
      carrierMessageId: 'x1',
      state: 'expired',
      stat: 'EXPIRED',
    });
    expect(parseDeliveryReceipt(receipt('id:7 stat:UNDELIV err:005 text:stat:DELIVRD id:8'))).toMatchObject({
      carrierMessageId: '7',
      state: 'undeliverable',
      errorCode: '005',
    });
    expect(parseDeliveryReceipt(receipt('no id here'))).toBeUndefined();
  });

  it('reads a receipt an SMSC wrote in UCS-2 (data_coding 8, copied from the original message), so its message is not left submitted', () => {
    const text = 'id:0a1b2c sub:001 dlvrd:001 submit date:2403151200 done date:2403151201 stat:DELIVRD err:000 text:Tēnā koe 你好';
    expect(parseDeliveryReceipt(receipt(text, [], 8))).toEqual(parseDeliveryReceipt(receipt(text.replace(/text:.*/, 'text:'))));
    expect(parseDeliveryReceipt(receipt(text, [], 8))).toMatchObject({ carrierMessageId: '0a1b2c', state: 'delivered', errorCode: '000' });
    // message_payload carries it the same way, and a data coding with a message class is still UCS-2.
    const payload: SmPdu = { ...receipt('', [{ tag: TlvTag.message_payload, value: utf16be('id:77 stat:UNDELIV err:005') }]), dataCoding: 0x18 };
    expect(parseDeliveryReceipt(payload)).toMatchObject({ carrierMessageId: '77', state: 'undeliverable', errorCode: '005' });
  });

  it('still reads a receipt whose SMSC says UCS-2 but writes its text in plain ASCII', () => {
    const ascii: SmPdu = { ...receipt('id:19088743 stat:EXPIRED err:027'), dataCoding: 8 };
    expect(parseDeliveryReceipt(ascii)).toMatchObject({ carrierMessageId: '19088743', state: 'expired', errorCode: '027' });
  });

  it('says what a GSM network error code means, and nothing of an SMSC’s own err: text', () => {
    const gsm = (code: number): Tlv => ({ tag: TlvTag.network_error_code, value: Buffer.of(3, code >> 8, code & 0xff) });
    expect(parseDeliveryReceipt(receipt('id:7 stat:EXPIRED err:027 text:Kia ora', [gsm(27)]))).toMatchObject({
      errorCode: '027',
      errorMeaning: 'absent subscriber',
    });
    expect(parseDeliveryReceipt(receipt('id:7 stat:UNDELIV err:001 text:你好'))).not.toHaveProperty('errorMeaning');
  });

  it('formats the text it parses', () => {
    const text = formatReceiptText({
      id: 'ff01',
      state: 'expired',
      submitDate: Date.UTC(2025, 0, 2, 3, 4),
      doneDate: Date.UTC(2025, 0, 3, 3, 4),
      err: '027',
      text: 'Hi 😀 there',
    });
    expect(text).toBe('id:ff01 sub:001 dlvrd:000 submit date:2501020304 done date:2501030304 stat:EXPIRED err:027 text:Hi ?? there');
    expect(parseDeliveryReceipt(receipt(text))).toMatchObject({
      carrierMessageId: 'ff01',
      state: 'expired',
      errorCode: '027',
      doneDate: Date.UTC(2025, 0, 3, 3, 4),
    });
  });

  it('knows receipt esm_class values and both date lengths', () => {
    expect(isReceiptEsmClass(0x04)).toBe(true);
    expect(isReceiptEsmClass(0x20)).toBe(true);
    expect(isReceiptEsmClass(0x00)).toBe(false);
    expect(isReceiptEsmClass(0x40)).toBe(false);
    expect(parseReceiptDate('240315120130')).toBe(Date.UTC(2024, 2, 15, 12, 1, 30));
    expect(parseReceiptDate('2403')).toBeUndefined();
  });
});
