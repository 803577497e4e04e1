import { describe, expect, it } from 'vitest';
import { CommandId } from './command-id';
import { CommandStatus } from './command-status';
import { decodePdu, PduError, writePdu, type Pdu, type SmPdu } from './pdu';
import { PduWriter } from './pdu-writer';
import { TlvTag, cStringTlv, sarTlvs, tlvCString, tlvUint, uint8Tlv } from './tlv';

function encode(pdu: Pdu): Buffer {
  const w = new PduWriter(32);
  writePdu(w, pdu);
  return w.take();
}

function roundTrip<T extends Pdu>(pdu: T): T {
  return decodePdu(encode(pdu)) as T;
}

const submit: SmPdu = {
  commandId: CommandId.submit_sm,
  commandStatus: 0,
  sequenceNumber: 42,
  serviceType: 'CMT',
  sourceAddrTon: 5,
  sourceAddrNpi: 0,
  sourceAddr: 'Hermod',
  destAddrTon: 1,
  destAddrNpi: 1,
  destinationAddr: '64211234567',
  esmClass: 0x40,
  protocolId: 0,
  priorityFlag: 1,
  scheduleDeliveryTime: '',
  validityPeriod: '000001000000000R',
  registeredDelivery: 1,
  replaceIfPresentFlag: 0,
  dataCoding: 8,
  smDefaultMsgId: 0,
  shortMessage: Buffer.from('0500030a0201d83dde00', 'hex'),
  tlvs: [...sarTlvs(0x1234, 2, 1), uint8Tlv(TlvTag.message_state, 2)],
};

describe('SMPP 3.4 PDU codec', () => {
  it('writes the 16-octet header big-endian with command_length covering the whole PDU', () => {
    const bytes = encode({ commandId: CommandId.enquire_link, commandStatus: 0, sequenceNumber: 7 });
    expect(bytes.toString('hex')).toBe('00000010' + '00000015' + '00000000' + '00000007');
  });

  it('encodes bind_transceiver with C-octet strings, interface version 0x34 and an empty address_range', () => {
    const bytes = encode({ commandId: CommandId.bind_transceiver, commandStatus: 0, sequenceNumber: 1, systemId: 'ab', password: 'pw', systemType: '' });
    expect(bytes.subarray(16).toString('hex')).toBe('616200' + '707700' + '00' + '34' + '00' + '00' + '00');
    expect(bytes.readUInt32BE(0)).toBe(bytes.length);
  });

  it('round-trips bind requests and responses of all three kinds', () => {
    for (const commandId of [CommandId.bind_transceiver, CommandId.bind_transmitter, CommandId.bind_receiver]) {
      const pdu = roundTrip({
        commandId,
        commandStatus: 0,
        sequenceNumber: 3,
        systemId: 'hermod',
        password: 'secret',
        systemType: 'VMA',
        interfaceVersion: 0x34,
        addrTon: 1,
        addrNpi: 1,
        addressRange: '^64',
      });
      expect(pdu).toMatchObject({
        commandId,
        systemId: 'hermod',
        password: 'secret',
        systemType: 'VMA',
        interfaceVersion: 0x34,
        addrTon: 1,
        addrNpi: 1,
        addressRange: '^64',
      });
    }
    for (const commandId of [CommandId.bind_transceiver_resp, CommandId.bind_transmitter_resp, CommandId.bind_receiver_resp]) {
      const pdu = roundTrip({ commandId, commandStatus: 0, sequenceNumber: 3, systemId: 'smsc', tlvs: [uint8Tlv(TlvTag.sc_interface_version, 0x34)] });
      expect(pdu.systemId).toBe('smsc');
      expect(tlvUint(pdu.tlvs, TlvTag.sc_interface_version)).toBe(0x34);
    }
  });

  it('round-trips submit_sm and deliver_sm with every field and TLVs', () => {
    for (const commandId of [CommandId.submit_sm, CommandId.deliver_sm]) {
      const pdu = roundTrip({ ...submit, commandId });
      expect({ ...pdu, shortMessage: pdu.shortMessage.toString('hex'), tlvs: undefined }).toEqual({
        ...submit,
        commandId,
        shortMessage: submit.shortMessage.toString('hex'),
        tlvs: undefined,
      });
      expect(tlvUint(pdu.tlvs, TlvTag.sar_msg_ref_num)).toBe(0x1234);
      expect(tlvUint(pdu.tlvs, TlvTag.sar_total_segments)).toBe(2);
      expect(tlvUint(pdu.tlvs, TlvTag.sar_segment_seqnum)).toBe(1);
      expect(tlvUint(pdu.tlvs, TlvTag.message_state)).toBe(2);
    }
  });

  it('carries receipted_message_id and message_payload TLVs', () => {
    const payload = Buffer.alloc(1000, 0x41);
    const pdu = roundTrip<SmPdu>({
      ...submit,
      shortMessage: Buffer.alloc(0),
      tlvs: [cStringTlv(TlvTag.receipted_message_id, 'abc123'), { tag: TlvTag.message_payload, value: payload }],
    });
    expect(tlvCString(pdu.tlvs, TlvTag.receipted_message_id)).toBe('abc123');
    expect(pdu.tlvs?.find((t) => t.tag === TlvTag.message_payload)?.value.equals(payload)).toBe(true);
  });

  it('round-trips submit_sm_resp, deliver_sm_resp and the bodiless PDUs', () => {
    expect(roundTrip({ commandId: CommandId.submit_sm_resp, commandStatus: 0, sequenceNumber: 9, messageId: '1a2b' }).messageId).toBe('1a2b');
    expect(roundTrip({ commandId: CommandId.deliver_sm_resp, commandStatus: 0, sequenceNumber: 9, messageId: '' }).messageId).toBe('');
    for (const commandId of [CommandId.unbind, CommandId.unbind_resp, CommandId.enquire_link, CommandId.enquire_link_resp, CommandId.generic_nack]) {
      expect(roundTrip({ commandId, commandStatus: 0, sequenceNumber: 0x7fffffff })).toEqual({ commandId, commandStatus: 0, sequenceNumber: 0x7fffffff });
    }
  });

  it('reads a rejected submit_sm_resp that has no body at all', () => {
    const bytes = encode({ commandId: CommandId.submit_sm_resp, commandStatus: CommandStatus.ESME_RTHROTTLED, sequenceNumber: 5, messageId: '' });
    expect(bytes.length).toBe(16);
    expect(decodePdu(bytes)).toMatchObject({ commandStatus: 0x58, messageId: '' });
  });

  it('encodes query_sm as section 4.8.1 lays it out: message_id, source_addr_ton, source_addr_npi, source_addr', () => {
    const query = {
      commandId: CommandId.query_sm,
      commandStatus: 0,
      sequenceNumber: 3,
      messageId: 'abc',
      sourceAddrTon: 1,
      sourceAddrNpi: 1,
      sourceAddr: '6421',
    } as const;
    const bytes = encode(query);
    expect(bytes.toString('hex')).toBe('0000001b' + '00000003' + '00000000' + '00000003' + '61626300' + '01' + '01' + '3634323100');
    expect(decodePdu(bytes)).toEqual(query);
  });

  it('encodes query_sm_resp as section 4.8.2 lays it out: message_id, final_date, message_state, error_code', () => {
    const resp = {
      commandId: CommandId.query_sm_resp,
      commandStatus: 0,
      sequenceNumber: 3,
      messageId: 'abc',
      finalDate: '261202183012000+',
      messageState: 2,
      errorCode: 0,
    };
    const bytes = encode(resp);
    expect(bytes.toString('hex')).toBe(
      '00000027' + '80000003' + '00000000' + '00000003' + '61626300' + Buffer.from('261202183012000+\0').toString('hex') + '02' + '00',
    );
    expect(decodePdu(bytes)).toEqual(resp);
  });

  it('writes an empty final_date of a message not final yet as a single NUL', () => {
    const bytes = encode({
      commandId: CommandId.query_sm_resp,
      commandStatus: 0,
      sequenceNumber: 4,
      messageId: 'f1',
      finalDate: '',
      messageState: 1,
      errorCode: 0,
    });
    expect(bytes.subarray(16).toString('hex')).toBe('663100' + '00' + '01' + '00');
  });

  it('refuses to encode a final_date that is not an absolute time of 16 characters', () => {
    const w = new PduWriter(16);
    expect(() =>
      writePdu(w, {
        commandId: CommandId.query_sm_resp,
        commandStatus: 0,
        sequenceNumber: 4,
        messageId: 'f1',
        finalDate: '2612021830',
        messageState: 2,
        errorCode: 0,
      }),
    ).toThrow(PduError);
    expect(w.length).toBe(0);
  });

  it('reads a failed query_sm_resp (ESME_RQUERYFAIL) with no body, or a cut one, without throwing', () => {
    const bytes = encode({
      commandId: CommandId.query_sm_resp,
      commandStatus: CommandStatus.ESME_RQUERYFAIL,
      sequenceNumber: 5,
      messageId: '',
      finalDate: '',
      messageState: 0,
      errorCode: 0,
    });
    expect(bytes.toString('hex')).toBe('00000010' + '80000003' + '00000067' + '00000005');
    const empty = { commandId: CommandId.query_sm_resp, commandStatus: 0x67, sequenceNumber: 5, messageId: '', finalDate: '', messageState: 0, errorCode: 0 };
    expect(decodePdu(bytes)).toEqual(empty);
    const cut = Buffer.concat([bytes, Buffer.from('616263', 'hex')]);
    cut.writeUInt32BE(cut.length, 0);
    expect(decodePdu(cut)).toEqual(empty);
    cut.writeUInt32BE(0, 8);
    expect(() => decodePdu(cut)).toThrow(PduError);
  });

  it('refuses to encode strings longer than the spec allows and leaves nothing half-written', () => {
    const w = new PduWriter(16);
    writePdu(w, { commandId: CommandId.enquire_link, commandStatus: 0, sequenceNumber: 1 });
    expect(() => writePdu(w, { ...submit, destinationAddr: '1'.repeat(21) })).toThrow(PduError);
    expect(() => writePdu(w, { ...submit, shortMessage: Buffer.alloc(255) })).toThrow(/message_payload/);
    expect(w.length).toBe(16);
  });

  it('rejects unknown commands and truncated bodies with the status a peer should get back', () => {
    const unknown = Buffer.from('00000010' + '000000ff' + '00000000' + '0000000c', 'hex');
    expect(() => decodePdu(unknown)).toThrow(expect.objectContaining({ status: CommandStatus.ESME_RINVCMDID, sequenceNumber: 12 }));
    const full = encode(submit);
    const cut = Buffer.from(full.subarray(0, 30));
    cut.writeUInt32BE(30, 0);
    expect(() => decodePdu(cut)).toThrow(PduError);
    const badTlv = Buffer.concat([full, Buffer.from('0427', 'hex')]);
    badTlv.writeUInt32BE(badTlv.length, 0);
    expect(() => decodePdu(badTlv)).toThrow(expect.objectContaining({ status: CommandStatus.ESME_RINVOPTPARSTREAM }));
  });

  it('batches many PDUs into one buffer and grows it as needed', () => {
    const w = new PduWriter(16);
    for (let i = 1; i <= 100; i++) writePdu(w, { ...submit, sequenceNumber: i });
    const all = w.take();
    expect(w.length).toBe(0);
    const one = encode(submit).length;
    expect(all.length).toBe(one * 100);
    expect((decodePdu(all.subarray(one * 99)) as SmPdu).sequenceNumber).toBe(100);
  });
});
