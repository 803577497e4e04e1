import { CommandId } from './command-id';
import { CommandStatus } from './command-status';
import { PduError } from './pdu-error';
import { PduReader } from './pdu-reader';
import type { PduWriter } from './pdu-writer';
import { NO_TLVS, type Tlv } from './tlv';

export { PduError } from './pdu-error';

/** command_length + command_id + command_status + sequence_number. */
export const HEADER_LENGTH = 16;
/** SMPP version 3.4 as carried in interface_version. */
export const INTERFACE_VERSION = 0x34;
/** Largest frame accepted by default: a 64 KiB message_payload plus the fixed fields. */
export const DEFAULT_MAX_PDU_LENGTH = 65536 + 512;
/** Largest short_message; longer bodies go in the message_payload TLV. */
export const MAX_SHORT_MESSAGE = 254;

type Ids = typeof CommandId;
interface Header<K extends keyof Ids> {
  commandId: Ids[K];
  commandStatus: number;
  sequenceNumber: number;
}

export type BindCommand = 'bind_transceiver' | 'bind_transmitter' | 'bind_receiver';

export interface BindPdu extends Header<BindCommand> {
  systemId: string;
  password: string;
  systemType: string;
  interfaceVersion?: number;
  addrTon?: number;
  addrNpi?: number;
  addressRange?: string;
}

export interface BindRespPdu extends Header<`${BindCommand}_resp`> {
  systemId: string;
  tlvs?: readonly Tlv[];
}

/** submit_sm and deliver_sm share one body layout (sections 4.4.1 and 4.6.1). */
export interface SmPdu extends Header<'submit_sm' | 'deliver_sm'> {
  serviceType?: string;
  sourceAddrTon?: number;
  sourceAddrNpi?: number;
  sourceAddr: string;
  destAddrTon?: number;
  destAddrNpi?: number;
  destinationAddr: string;
  esmClass: number;
  protocolId?: number;
  priorityFlag?: number;
  scheduleDeliveryTime?: string;
  validityPeriod?: string;
  registeredDelivery: number;
  replaceIfPresentFlag?: number;
  dataCoding: number;
  smDefaultMsgId?: number;
  /** At most 254 octets; a decoded one is a view into the received frame. */
  shortMessage: Buffer;
  tlvs?: readonly Tlv[];
}

/**
 * data_sm (section 4.7.1): a message either way without submit_sm's schedule,
 * validity and short_message; its body, if any, is in message_payload. Some
 * SMSCs send replies and receipts this way rather than as deliver_sm.
 */
export interface DataSmPdu extends Header<'data_sm'> {
  serviceType?: string;
  sourceAddrTon?: number;
  sourceAddrNpi?: number;
  sourceAddr: string;
  destAddrTon?: number;
  destAddrNpi?: number;
  destinationAddr: string;
  esmClass: number;
  registeredDelivery: number;
  dataCoding: number;
  tlvs?: readonly Tlv[];
}

export interface SmRespPdu extends Header<'submit_sm_resp' | 'deliver_sm_resp' | 'data_sm_resp'> {
  messageId: string;
  tlvs?: readonly Tlv[];
}

/** query_sm (section 4.8.1): what became of a message, by the id its submit_sm_resp gave and its source address. */
export interface QuerySmPdu extends Header<'query_sm'> {
  messageId: string;
  sourceAddrTon?: number;
  sourceAddrNpi?: number;
  sourceAddr: string;
}

/**
 * query_sm_resp (section 4.8.2). `finalDate` is an absolute time
 * (YYMMDDhhmmsstnnp) once the message is final, '' before; `messageState` is
 * section 5.2.28's. A failed query (ESME_RQUERYFAIL) may have no body at all:
 * it then reads as '' and zeros.
 */
export interface QuerySmRespPdu extends Header<'query_sm_resp'> {
  messageId: string;
  finalDate: string;
  messageState: number;
  errorCode: number;
}

export interface EmptyPdu extends Header<'unbind' | 'unbind_resp' | 'enquire_link' | 'enquire_link_resp' | 'generic_nack'> {}

export type Pdu = BindPdu | BindRespPdu | SmPdu | DataSmPdu | SmRespPdu | QuerySmPdu | QuerySmRespPdu | EmptyPdu;

// Spec maxima (with the NUL) for what we send; what we receive may be longer
// (SMSCs differ), so decoding only insists on a NUL within the frame-bounded limit.
const LAX = 256;

/** Appends one PDU to `w`. On failure nothing of it is left in the writer. */
export function writePdu(w: PduWriter, pdu: Pdu): void {
  const start = w.length;
  try {
    w.u32(0);
    w.u32(pdu.commandId);
    w.u32(pdu.commandStatus);
    w.u32(pdu.sequenceNumber);
    writeBody(w, pdu);
    w.patchU32(start, w.length - start);
  } catch (err) {
    w.truncate(start);
    if (err instanceof PduError) throw new PduError(err.status, err.message, pdu);
    throw err;
  }
}

function writeBody(w: PduWriter, pdu: Pdu): void {
  switch (pdu.commandId) {
    case CommandId.bind_transceiver:
    case CommandId.bind_transmitter:
    case CommandId.bind_receiver:
      w.cString(pdu.systemId, 16, 'system_id');
      w.cString(pdu.password, 9, 'password');
      w.cString(pdu.systemType, 13, 'system_type');
      w.u8(pdu.interfaceVersion ?? INTERFACE_VERSION);
      w.u8(pdu.addrTon ?? 0);
      w.u8(pdu.addrNpi ?? 0);
      w.cString(pdu.addressRange ?? '', 41, 'address_range');
      return;
    case CommandId.bind_transceiver_resp:
    case CommandId.bind_transmitter_resp:
    case CommandId.bind_receiver_resp:
      w.cString(pdu.systemId, 16, 'system_id');
      writeTlvs(w, pdu.tlvs);
      return;
    case CommandId.submit_sm:
    case CommandId.deliver_sm:
      w.cString(pdu.serviceType ?? '', 6, 'service_type');
      w.u8(pdu.sourceAddrTon ?? 0);
      w.u8(pdu.sourceAddrNpi ?? 0);
      w.cString(pdu.sourceAddr, 21, 'source_addr');
      w.u8(pdu.destAddrTon ?? 0);
      w.u8(pdu.destAddrNpi ?? 0);
      w.cString(pdu.destinationAddr, 21, 'destination_addr');
      w.u8(pdu.esmClass);
      w.u8(pdu.protocolId ?? 0);
      w.u8(pdu.priorityFlag ?? 0);
      w.cString(pdu.scheduleDeliveryTime ?? '', 17, 'schedule_delivery_time');
      w.cString(pdu.validityPeriod ?? '', 17, 'validity_period');
      w.u8(pdu.registeredDelivery);
      w.u8(pdu.replaceIfPresentFlag ?? 0);
      w.u8(pdu.dataCoding);
      w.u8(pdu.smDefaultMsgId ?? 0);
      if (pdu.shortMessage.length > MAX_SHORT_MESSAGE) {
        throw new PduError(CommandStatus.ESME_RINVMSGLEN, `short_message is ${pdu.shortMessage.length} octets (max ${MAX_SHORT_MESSAGE}); use message_payload`);
      }
      w.u8(pdu.shortMessage.length);
      w.octets(pdu.shortMessage);
      writeTlvs(w, pdu.tlvs);
      return;
    case CommandId.data_sm:
      w.cString(pdu.serviceType ?? '', 6, 'service_type');
      w.u8(pdu.sourceAddrTon ?? 0);
      w.u8(pdu.sourceAddrNpi ?? 0);
      w.cString(pdu.sourceAddr, 65, 'source_addr');
      w.u8(pdu.destAddrTon ?? 0);
      w.u8(pdu.destAddrNpi ?? 0);
      w.cString(pdu.destinationAddr, 65, 'destination_addr');
      w.u8(pdu.esmClass);
      w.u8(pdu.registeredDelivery);
      w.u8(pdu.dataCoding);
      writeTlvs(w, pdu.tlvs);
      return;
    case CommandId.submit_sm_resp:
    case CommandId.deliver_sm_resp:
    case CommandId.data_sm_resp:
      // A rejected submit_sm_resp carries no body (section 4.4.2).
      if (pdu.commandId === CommandId.submit_sm_resp && pdu.commandStatus !== 0 && !pdu.messageId) return;
      w.cString(pdu.messageId, 65, 'message_id');
      writeTlvs(w, pdu.tlvs);
      return;
    case CommandId.query_sm:
      w.cString(pdu.messageId, 65, 'message_id');
      w.u8(pdu.sourceAddrTon ?? 0);
      w.u8(pdu.sourceAddrNpi ?? 0);
      w.cString(pdu.sourceAddr, 21, 'source_addr');
      return;
    case CommandId.query_sm_resp:
      if (pdu.commandStatus !== 0 && !pdu.messageId) return;
      // An absolute time is exactly 16 characters; anything else would be misread by the peer.
      if (pdu.finalDate.length !== 0 && pdu.finalDate.length !== 16)
        throw new PduError(CommandStatus.ESME_RINVPARLEN, 'final_date is neither empty nor 16 characters');
      w.cString(pdu.messageId, 65, 'message_id');
      w.cString(pdu.finalDate, 17, 'final_date');
      w.u8(pdu.messageState);
      w.u8(pdu.errorCode);
      return;
    case CommandId.unbind:
    case CommandId.unbind_resp:
    case CommandId.enquire_link:
    case CommandId.enquire_link_resp:
    case CommandId.generic_nack:
      return;
    default:
      throw new PduError(CommandStatus.ESME_RINVCMDID, `cannot encode command 0x${((pdu as Pdu).commandId >>> 0).toString(16)}`);
  }
}

function writeTlvs(w: PduWriter, tlvs: readonly Tlv[] | undefined): void {
  if (!tlvs) return;
  for (const tlv of tlvs) {
    if (tlv.value.length > 0xffff) throw new PduError(CommandStatus.ESME_RINVPARLEN, `TLV 0x${tlv.tag.toString(16)} is longer than 65535 octets`);
    w.u16(tlv.tag);
    w.u16(tlv.value.length);
    w.octets(tlv.value);
  }
}

const reader = new PduReader();

/**
 * Decodes one whole frame (as cut by FrameDecoder). Buffers in the result are
 * views into `frame`; copy them to keep them past the current chunk. Throws
 * PduError (with the status a peer should get back) for unknown commands and
 * malformed bodies.
 */
export function decodePdu(frame: Buffer): Pdu {
  if (frame.length < HEADER_LENGTH) throw new PduError(CommandStatus.ESME_RINVCMDLEN, `frame of ${frame.length} octets is shorter than a header`);
  const commandLength = frame.readUInt32BE(0);
  const commandId = frame.readUInt32BE(4);
  const commandStatus = frame.readUInt32BE(8);
  const sequenceNumber = frame.readUInt32BE(12);
  if (commandLength !== frame.length) {
    throw new PduError(CommandStatus.ESME_RINVCMDLEN, `command_length ${commandLength} but frame has ${frame.length} octets`, { commandId, sequenceNumber });
  }
  const r = reader.reset(frame, HEADER_LENGTH, commandId, sequenceNumber);
  switch (commandId) {
    case CommandId.bind_transceiver:
    case CommandId.bind_transmitter:
    case CommandId.bind_receiver:
      return {
        commandId,
        commandStatus,
        sequenceNumber,
        systemId: r.cString(LAX, 'system_id'),
        password: r.cString(LAX, 'password'),
        systemType: r.cString(LAX, 'system_type'),
        interfaceVersion: r.u8('interface_version'),
        addrTon: r.u8('addr_ton'),
        addrNpi: r.u8('addr_npi'),
        addressRange: r.cString(LAX, 'address_range'),
      };
    case CommandId.bind_transceiver_resp:
    case CommandId.bind_transmitter_resp:
    case CommandId.bind_receiver_resp:
      return { commandId, commandStatus, sequenceNumber, systemId: r.optionalCString(LAX, 'system_id'), tlvs: r.tlvs() };
    case CommandId.submit_sm:
    case CommandId.deliver_sm: {
      const pdu: SmPdu = {
        commandId,
        commandStatus,
        sequenceNumber,
        serviceType: r.cString(LAX, 'service_type'),
        sourceAddrTon: r.u8('source_addr_ton'),
        sourceAddrNpi: r.u8('source_addr_npi'),
        sourceAddr: r.cString(LAX, 'source_addr'),
        destAddrTon: r.u8('dest_addr_ton'),
        destAddrNpi: r.u8('dest_addr_npi'),
        destinationAddr: r.cString(LAX, 'destination_addr'),
        esmClass: r.u8('esm_class'),
        protocolId: r.u8('protocol_id'),
        priorityFlag: r.u8('priority_flag'),
        scheduleDeliveryTime: r.cString(LAX, 'schedule_delivery_time'),
        validityPeriod: r.cString(LAX, 'validity_period'),
        registeredDelivery: r.u8('registered_delivery'),
        replaceIfPresentFlag: r.u8('replace_if_present_flag'),
        dataCoding: r.u8('data_coding'),
        smDefaultMsgId: r.u8('sm_default_msg_id'),
        shortMessage: r.octets(r.u8('sm_length'), 'short_message'),
        tlvs: NO_TLVS,
      };
      pdu.tlvs = r.tlvs();
      return pdu;
    }
    case CommandId.data_sm: {
      const pdu: DataSmPdu = {
        commandId,
        commandStatus,
        sequenceNumber,
        serviceType: r.cString(LAX, 'service_type'),
        sourceAddrTon: r.u8('source_addr_ton'),
        sourceAddrNpi: r.u8('source_addr_npi'),
        sourceAddr: r.cString(LAX, 'source_addr'),
        destAddrTon: r.u8('dest_addr_ton'),
        destAddrNpi: r.u8('dest_addr_npi'),
        destinationAddr: r.cString(LAX, 'destination_addr'),
        esmClass: r.u8('esm_class'),
        registeredDelivery: r.u8('registered_delivery'),
        dataCoding: r.u8('data_coding'),
        tlvs: NO_TLVS,
      };
      pdu.tlvs = r.tlvs();
      return pdu;
    }
    case CommandId.submit_sm_resp:
    case CommandId.deliver_sm_resp:
    case CommandId.data_sm_resp:
      return { commandId, commandStatus, sequenceNumber, messageId: r.optionalCString(LAX, 'message_id'), tlvs: r.tlvs() };
    case CommandId.query_sm:
      return {
        commandId,
        commandStatus,
        sequenceNumber,
        messageId: r.cString(LAX, 'message_id'),
        sourceAddrTon: r.u8('source_addr_ton'),
        sourceAddrNpi: r.u8('source_addr_npi'),
        sourceAddr: r.cString(LAX, 'source_addr'),
      };
    case CommandId.query_sm_resp:
      try {
        return {
          commandId,
          commandStatus,
          sequenceNumber,
          messageId: r.cString(LAX, 'message_id'),
          finalDate: r.cString(LAX, 'final_date'),
          messageState: r.u8('message_state'),
          errorCode: r.u8('error_code'),
        };
      } catch (err) {
        // A failed query says all in its command_status, whatever body (none, or part of one) came with it.
        if (commandStatus === 0) throw err;
        return { commandId, commandStatus, sequenceNumber, messageId: '', finalDate: '', messageState: 0, errorCode: 0 };
      }
    case CommandId.unbind:
    case CommandId.unbind_resp:
    case CommandId.enquire_link:
    case CommandId.enquire_link_resp:
    case CommandId.generic_nack:
      return { commandId, commandStatus, sequenceNumber };
    default:
      throw new PduError(CommandStatus.ESME_RINVCMDID, `unsupported command_id 0x${commandId.toString(16).padStart(8, '0')}`, { commandId, sequenceNumber });
  }
}
