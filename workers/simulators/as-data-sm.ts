import { CommandId } from '../carriers/smpp/command-id';
import type { DataSmPdu, SmPdu } from '../carriers/smpp/pdu';
import { findTlv, TlvTag } from '../carriers/smpp/tlv';

/**
 * A deliver_sm as an SMSC that sends replies and receipts as data_sm writes
 * it: the same addresses, esm_class and data_coding, and its short_message in
 * message_payload (data_sm has no short_message).
 */
export function asDataSm(pdu: SmPdu): DataSmPdu {
  const tlvs = [...(pdu.tlvs ?? [])];
  if (pdu.shortMessage.length > 0 && !findTlv(tlvs, TlvTag.message_payload)) tlvs.push({ tag: TlvTag.message_payload, value: pdu.shortMessage });
  return {
    commandId: CommandId.data_sm,
    commandStatus: 0,
    sequenceNumber: pdu.sequenceNumber,
    serviceType: pdu.serviceType,
    sourceAddrTon: pdu.sourceAddrTon,
    sourceAddrNpi: pdu.sourceAddrNpi,
    sourceAddr: pdu.sourceAddr,
    destAddrTon: pdu.destAddrTon,
    destAddrNpi: pdu.destAddrNpi,
    destinationAddr: pdu.destinationAddr,
    esmClass: pdu.esmClass,
    registeredDelivery: pdu.registeredDelivery,
    dataCoding: pdu.dataCoding,
    tlvs,
  };
}
