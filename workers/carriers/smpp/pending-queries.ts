import { HermodError } from '../../../lib/errors';
import { CommandId } from './command-id';
import type { QuerySmPdu, QuerySmRespPdu } from './pdu';
import { smppAddress } from './smpp-address';
import { statusError } from './submit-request';

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

interface Pending {
  resolve(answer: QueryAnswer): void;
  reject(err: HermodError): void;
  timer: NodeJS.Timeout;
}

/**
 * The query_sm of one client awaiting their answer, by sequence number. They
 * are few (asked about lost receipts), so each has its own timer and none
 * takes a submit's window slot.
 */
export class PendingQueries {
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly timeoutMs: number) {}

  get size(): number {
    return this.pending.size;
  }

  /** Waits for the answer to the query sent as `sequenceNumber`. */
  wait(sequenceNumber: number): Promise<QueryAnswer> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(sequenceNumber);
        reject(new HermodError('timeout', `no query_sm_resp within ${this.timeoutMs} ms`, { retryable: true }));
      }, this.timeoutMs);
      this.pending.set(sequenceNumber, { resolve, reject, timer });
    });
  }

  /** Settles the query a query_sm_resp answers; a non-zero command_status rejects it as submits are (statusError). */
  answer(pdu: QuerySmRespPdu): boolean {
    const p = this.take(pdu.sequenceNumber);
    if (!p) return false;
    if (pdu.commandStatus === 0) p.resolve({ messageState: pdu.messageState, finalDate: pdu.finalDate, errorCode: pdu.errorCode });
    else p.reject(statusError(pdu.commandStatus));
    return true;
  }

  /** Rejects the query sent as `sequenceNumber` (a generic_nack for it); false if none was waiting. */
  fail(sequenceNumber: number, err: HermodError): boolean {
    const p = this.take(sequenceNumber);
    p?.reject(err);
    return p !== undefined;
  }

  failAll(err: HermodError): void {
    for (const seq of [...this.pending.keys()]) this.fail(seq, err);
  }

  private take(sequenceNumber: number): Pending | undefined {
    const p = this.pending.get(sequenceNumber);
    if (!p) return undefined;
    this.pending.delete(sequenceNumber);
    clearTimeout(p.timer);
    return p;
  }
}
