import { HermodError } from '../../../lib/errors';
import { CommandId } from './command-id';
import { isTransientStatus, statusName } from './command-status';
import { MAX_SHORT_MESSAGE, type SmPdu } from './pdu';
import { smppAddress } from './smpp-address';
import { TlvTag, type Tlv } from './tlv';

export interface SubmitRequest {
  /** Sender: `+E.164`, digits, or alphanumeric (TON/NPI are derived unless given). */
  source: string;
  destination: string;
  /** The short_message body, UDH included; over 254 octets it is sent as message_payload. */
  shortMessage: Buffer;
  dataCoding: number;
  esmClass?: number;
  /** Default 1: a receipt on success or failure. */
  registeredDelivery?: number;
  serviceType?: string;
  protocolId?: number;
  priorityFlag?: number;
  validityPeriod?: string;
  sourceTon?: number;
  sourceNpi?: number;
  destTon?: number;
  destNpi?: number;
  tlvs?: Tlv[];
  /** Called when the PDU leaves the window queue for the socket. */
  onSent?: () => void;
  /** Asked when the PDU would leave the window queue: true withdraws it unsent (rejected with heldBackError). */
  holdBack?: () => boolean;
}

export interface SubmitResult {
  messageId: string;
}

/** The HermodError a non-zero submit_sm_resp command_status becomes. */
export function statusError(status: number): HermodError {
  const name = statusName(status);
  return isTransientStatus(status)
    ? new HermodError('carrier_transient', `SMSC answered ${name}`, { retryable: true, cause: { status } })
    : new HermodError('carrier_rejected', `SMSC rejected the message: ${name}`, { retryable: false, cause: { status } });
}

const EMPTY = Buffer.alloc(0);

/**
 * The submit_sm for a request, checked up front so that nothing that cannot
 * be encoded ever takes a window slot. Throws HermodError 'invalid_attrib'.
 */
export function buildSubmitPdu(r: SubmitRequest): SmPdu {
  const src = smppAddress(r.source);
  const dst = smppAddress(r.destination);
  const problems: { field: string; description: string }[] = [];
  if (src.addr.length > 20) problems.push({ field: 'source', description: 'longer than 20 characters' });
  if (!dst.addr || dst.addr.length > 20) problems.push({ field: 'destination', description: 'empty or longer than 20 characters' });
  if (r.shortMessage.length > 0xffff) problems.push({ field: 'shortMessage', description: 'longer than 65535 octets' });
  if ((r.serviceType?.length ?? 0) > 5) problems.push({ field: 'serviceType', description: 'longer than 5 characters' });
  if ((r.validityPeriod?.length ?? 0) > 16) problems.push({ field: 'validityPeriod', description: 'longer than 16 characters' });
  if (problems.length > 0)
    throw new HermodError('invalid_attrib', `cannot submit: ${problems.map((p) => `${p.field} ${p.description}`).join(', ')}`, { fields: problems });
  let shortMessage = r.shortMessage;
  let tlvs: readonly Tlv[] | undefined = r.tlvs;
  if (shortMessage.length > MAX_SHORT_MESSAGE) {
    tlvs = [...(tlvs ?? []), { tag: TlvTag.message_payload, value: shortMessage }];
    shortMessage = EMPTY;
  }
  return {
    commandId: CommandId.submit_sm,
    commandStatus: 0,
    sequenceNumber: 0,
    serviceType: r.serviceType ?? '',
    sourceAddrTon: r.sourceTon ?? src.ton,
    sourceAddrNpi: r.sourceNpi ?? src.npi,
    sourceAddr: src.addr,
    destAddrTon: r.destTon ?? dst.ton,
    destAddrNpi: r.destNpi ?? dst.npi,
    destinationAddr: dst.addr,
    esmClass: r.esmClass ?? 0,
    protocolId: r.protocolId ?? 0,
    priorityFlag: r.priorityFlag ?? 0,
    validityPeriod: r.validityPeriod ?? '',
    registeredDelivery: r.registeredDelivery ?? 1,
    dataCoding: r.dataCoding,
    shortMessage,
    tlvs,
  };
}
