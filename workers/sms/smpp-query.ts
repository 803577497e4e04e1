import type { CarrierConfig } from '../../lib/carriers-file';
import { HermodError, toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import type { OutboundJob } from '../../core/ports/bus-payloads';
import type { CarrierReport } from '../carrier';
import { parseAbsoluteTime } from '../carriers/smpp/absolute-time';
import { CommandStatus } from '../carriers/smpp/command-status';
import { MessageState, type ReceiptState } from '../carriers/smpp/delivery-receipt';
import type { QueryAnswer, SmppClient } from '../carriers/smpp/smpp-client';
import { STATUS_BY_RECEIPT } from './receipt-status';
import { smppStatusOf } from './smpp-status';

/**
 * The final message_states (SMPP 3.4 section 5.2.28), read as a receipt's stat
 * word would be; ENROUTE, ACCEPTED and UNKNOWN are not final, and the
 * message's receipt is still to come.
 */
const FINAL_STATE: Partial<Record<number, ReceiptState>> = {
  [MessageState.DELIVERED]: 'delivered',
  [MessageState.EXPIRED]: 'expired',
  [MessageState.DELETED]: 'deleted',
  [MessageState.UNDELIVERABLE]: 'undeliverable',
  [MessageState.REJECTED]: 'rejected',
};

/** The report an answer makes, if the message is final. */
export function queryReport(carrierId: string, answer: QueryAnswer, now = Date.now()): CarrierReport | undefined {
  const state = FINAL_STATE[answer.messageState];
  const status = state && STATUS_BY_RECEIPT[state];
  if (!status) return undefined;
  return {
    carrierId,
    status,
    at: parseAbsoluteTime(answer.finalDate) ?? now,
    // As receipts write their err: three digits, none for 0.
    errorCode: answer.errorCode === 0 ? '' : String(answer.errorCode).padStart(3, '0'),
    detail: 'found by query_sm',
  };
}

/** What an SMSC answers about an id it holds no message for: none known by it, or none of this ESME's (another source). */
const NO_SUCH_MESSAGE = new Set<number>([CommandStatus.ESME_RQUERYFAIL, CommandStatus.ESME_RINVMSGID]);

/**
 * Carrier.query for an SMPP carrier: asks query_sm on `client` (a bound bind
 * that submits) about each of `carrierIds` that carries this carrier's
 * prefix, with the job's source as its submit had it. An id the SMSC knows no
 * message for (ESME_RQUERYFAIL, ESME_RINVMSGID) makes no report, nor does one
 * it refuses or leaves unanswered while another part of the message is
 * answered: the answers of a message's other parts are kept, not thrown away
 * with it. Rejects only when no part got an answer, retryably if any part's
 * failure may pass.
 */
export async function querySmpp(
  config: CarrierConfig,
  client: SmppClient | undefined,
  job: OutboundJob,
  carrierIds: readonly string[],
  log: Logger,
): Promise<CarrierReport[]> {
  const ours = carrierIds.filter((id) => id.startsWith(config.idPrefix));
  if (ours.length === 0) return [];
  if (!client) throw new HermodError('unavailable', `no bind to carrier ${config.name} is up`, { retryable: true });
  const answers = await Promise.allSettled(
    ours.map((id) =>
      client.query({ messageId: id.slice(config.idPrefix.length), source: job.source, sourceTon: config.sourceTon, sourceNpi: config.sourceNpi }),
    ),
  );
  const reports: CarrierReport[] = [];
  const failures: { carrierId: string; err: unknown }[] = [];
  let answered = 0;
  answers.forEach((a, i) => {
    const carrierId = ours[i]!;
    if (a.status === 'fulfilled') {
      answered++;
      const report = queryReport(carrierId, a.value);
      if (report) reports.push(report);
    } else if (NO_SUCH_MESSAGE.has(smppStatusOf(a.reason) ?? -1)) {
      answered++;
      log.debug('SMSC knows no such message (query_sm failed)', { carrier: config.name, carrierId, messageId: job.id, err: a.reason });
    } else failures.push({ carrierId, err: a.reason });
  });
  if (answered === 0) throw (failures.find((f) => toHermodError(f.err).retryable) ?? failures[0]!).err;
  for (const { carrierId, err } of failures)
    log.debug('SMSC did not answer query_sm for a part; the parts it answered are reported', { carrier: config.name, carrierId, messageId: job.id, err });
  return reports;
}
