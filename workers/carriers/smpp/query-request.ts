import { HermodError } from '../../../lib/errors';
import { CommandId } from './command-id';
import type { QuerySmPdu } from './pdu';
import { smppAddress } from './smpp-address';

export interface QueryRequest {
  /** The id as the SMSC's submit_sm_resp gave it. */
  messageId: string;
  /** The submit's source, as submitted (TON/NPI derived as for submits unless given). */
  source: string;
  sourceTon?: number;
  sourceNpi?: number;
}

/** query_sm_resp's answer (SMPP 3.4 section 4.8.2). */
export interface QueryAnswer {
  /** Section 5.2.28: 1 ENROUTE, 2 DELIVERED, 3 EXPIRED, 4 DELETED, 5 UNDELIVERABLE, 6 ACCEPTED, 7 UNKNOWN, 8 REJECTED. */
  messageState: number;
  /** YYMMDDhhmmsstnnp once final (absolute-time.ts reads it); '' before. */
  finalDate: string;
  /** The network error code, 0 when none. */
  errorCode: number;
}

/** The query_sm for a request (sequence number 0 until sent). Throws HermodError 'invalid_attrib'. */
export function buildQueryPdu(r: QueryRequest): QuerySmPdu {
  const src = smppAddress(r.source);
  if (!r.messageId || r.messageId.length > 64 || src.addr.length > 20) {
    throw new HermodError('invalid_attrib', 'cannot query: message id empty or longer than 64 characters, or source longer than 20');
  }
  return {
    commandId: CommandId.query_sm,
    commandStatus: 0,
    sequenceNumber: 0,
    messageId: r.messageId,
    sourceAddrTon: r.sourceTon ?? src.ton,
    sourceAddrNpi: r.sourceNpi ?? src.npi,
    sourceAddr: src.addr,
  };
}
