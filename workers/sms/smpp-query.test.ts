import { describe, expect, it } from 'vitest';
import type { OutboundJob } from '../../core/ports/bus-payloads';
import { HermodError } from '../../lib/errors';
import { CommandStatus } from '../carriers/smpp/command-status';
import { MessageState } from '../carriers/smpp/delivery-receipt';
import type { QueryAnswer, SmppClient } from '../carriers/smpp/smpp-client';
import { statusError } from '../carriers/smpp/submit-request';
import { quietLog } from '../simulators/smpp-test-kit';
import { carrierConfig } from './carrier-config-test-kit';
import { querySmpp } from './smpp-query';

const config = carrierConfig('spark', 0);
const job = { id: 'm-1', applicationId: 'app', channel: 'sms', destination: '+6421000001', source: 'SHOP', content: 'Kia ora' } as OutboundJob;
const delivered: QueryAnswer = { messageState: MessageState.DELIVERED, finalDate: '2611220930000+52', errorCode: 0 };

/** A bind that answers query_sm for each message id as `answers` says: an answer, or an error to reject with. */
function client(answers: Record<string, QueryAnswer | HermodError>): SmppClient {
  return {
    query: async ({ messageId }: { messageId: string }) => {
      const answer = answers[messageId];
      if (answer === undefined || answer instanceof HermodError) throw answer ?? statusError(CommandStatus.ESME_RQUERYFAIL);
      return answer;
    },
  } as unknown as SmppClient;
}

const parts = ['spark:a1', 'spark:a2', 'spark:a3'];

describe('asking an SMSC about a message of several parts', () => {
  it('reports the parts it answered and skips the one it says it knows no such message for (ESME_RINVMSGID)', async () => {
    const smsc = client({ a1: delivered, a2: statusError(CommandStatus.ESME_RINVMSGID), a3: delivered });
    const reports = await querySmpp(config, smsc, job, parts, quietLog);
    expect(reports.map((r) => [r.carrierId, r.status])).toEqual([
      ['spark:a1', 'received'],
      ['spark:a3', 'received'],
    ]);
  });

  it('keeps the answered parts when the SMSC refuses or does not answer another', async () => {
    const smsc = client({
      a1: statusError(CommandStatus.ESME_RINVSRCADR),
      a2: delivered,
      a3: new HermodError('timeout', 'no query_sm_resp within 2000 ms', { retryable: true }),
    });
    expect((await querySmpp(config, smsc, job, parts, quietLog)).map((r) => r.carrierId)).toEqual(['spark:a2']);
  });

  it('reports nothing, without rejecting, when the SMSC knows none of the parts (its receipts, if any, are still to come)', async () => {
    const smsc = client({ a1: statusError(CommandStatus.ESME_RQUERYFAIL), a2: statusError(CommandStatus.ESME_RINVMSGID) });
    expect(await querySmpp(config, smsc, job, parts.slice(0, 2), quietLog)).toEqual([]);
  });

  it('rejects only when no part got an answer, retryably if any part may get one when asked again', async () => {
    const refused = client({ a1: statusError(CommandStatus.ESME_RINVSRCADR), a2: statusError(CommandStatus.ESME_RINVSRCADR) });
    await expect(querySmpp(config, refused, job, parts.slice(0, 2), quietLog)).rejects.toMatchObject({ code: 'carrier_rejected', retryable: false });
    const unanswered = client({
      a1: statusError(CommandStatus.ESME_RINVSRCADR),
      a2: new HermodError('timeout', 'no query_sm_resp within 2000 ms', { retryable: true }),
    });
    await expect(querySmpp(config, unanswered, job, parts.slice(0, 2), quietLog)).rejects.toMatchObject({ code: 'timeout', retryable: true });
  });
});
