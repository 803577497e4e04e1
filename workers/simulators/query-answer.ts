import type { IdBase } from '../../lib/carriers-file';
import { CommandId } from '../carriers/smpp/command-id';
import { CommandStatus } from '../carriers/smpp/command-status';
import { formatAbsoluteTime } from '../carriers/smpp/absolute-time';
import type { QuerySmPdu, QuerySmRespPdu } from '../carriers/smpp/pdu';
import type { MessageStates } from './message-states';

const DIGITS: Record<IdBase, RegExp> = { hex: /^[0-9a-f]+$/i, decimal: /^[0-9]+$/ };

/**
 * The numbers an id may stand for, read in each base the carrier writes ids
 * in (its submit_sm_resp's first, then its receipts'): any case, any leading
 * zeros, so the id as either wrote it, or as hermod keeps it, is found.
 */
export function idNumbers(id: string, bases: readonly IdBase[]): number[] {
  const out: number[] = [];
  for (const base of bases) {
    if (!DIGITS[base].test(id)) continue;
    const n = Number.parseInt(id, base === 'hex' ? 16 : 10);
    if (Number.isSafeInteger(n) && !out.includes(n)) out.push(n);
  }
  return out;
}

/**
 * query_sm_resp for a query: the state of the message `numbers` name (its
 * submit number, if any) when its source_addr matches the submit's (or is
 * empty); ESME_RQUERYFAIL with no body for an unknown or forgotten message or
 * another source, as an SMSC keeps each ESME's messages to itself.
 */
export function answerQuery(states: MessageStates, pdu: QuerySmPdu, numbers: readonly number[], now = Date.now()): QuerySmRespPdu {
  for (const n of numbers) {
    const state = states.lookup(n, now);
    if (!state || (pdu.sourceAddr !== '' && pdu.sourceAddr !== state.source)) continue;
    return {
      commandId: CommandId.query_sm_resp,
      commandStatus: CommandStatus.ESME_ROK,
      sequenceNumber: pdu.sequenceNumber,
      messageId: pdu.messageId,
      finalDate: state.finalAt === undefined ? '' : formatAbsoluteTime(state.finalAt),
      messageState: state.messageState,
      errorCode: state.errorCode,
    };
  }
  return queryFailed(pdu);
}

export function queryFailed(pdu: QuerySmPdu, status: number = CommandStatus.ESME_RQUERYFAIL): QuerySmRespPdu {
  return {
    commandId: CommandId.query_sm_resp,
    commandStatus: status,
    sequenceNumber: pdu.sequenceNumber,
    messageId: '',
    finalDate: '',
    messageState: 0,
    errorCode: 0,
  };
}
