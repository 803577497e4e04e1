import type { Logger } from '../../lib/log';
import { type Bus, topicName } from '../ports/bus';
import { encodeJob } from '../ports/bus-payloads';
import type { AwaitingReceipt, MessageHistory } from '../ports/message-history';

const PAGE = 5000;

/**
 * Asks the carriers about every SMS message that history shows with them and
 * without a final report: each goes to its channel's workers as a job that
 * names the carrier ids its submits got (OutboundJob.carrierIds), and the
 * worker asks the carrier (SMPP query_sm) and reports what it finds; the job
 * is never sent. For a Redis bus back without its data: the delivery receipts
 * its streams held went with it, and the SMSC, told it had them, never sends
 * them again. Those still on their way are told as their receipts come.
 *
 * Paged as recovery is, oldest first; a page history fails to give is asked
 * for again after `retryMs`, and a stop ends it between pages.
 */
export async function askCarriersAboutReceipts(deps: {
  history: Pick<MessageHistory, 'listAwaitingReceipt'>;
  bus: Pick<Bus, 'publish'>;
  log: Logger;
  /** Only messages accepted before then (ms): those submitted after the loss have their receipts coming. */
  acceptedBefore?: number;
  stopping?: () => boolean;
  retryMs: number;
}): Promise<number> {
  let after: { acceptedAt: number; id: string } | undefined;
  let total = 0;
  for (;;) {
    if (deps.stopping?.()) break;
    let page: AwaitingReceipt[];
    try {
      page = await deps.history.listAwaitingReceipt(PAGE, after, deps.acceptedBefore);
      await publishQueries(deps.bus, page);
    } catch (err) {
      deps.log.warn('asking carriers about messages whose receipts may be lost failed; will retry', { err, asked: total });
      await new Promise((resolve) => setTimeout(resolve, deps.retryMs));
      continue;
    }
    total += page.length;
    if (page.length < PAGE) break;
    const last = page[page.length - 1]!;
    after = { acceptedAt: last.acceptedAt, id: last.id };
  }
  if (total > 0) deps.log.info('asking the carriers about messages whose delivery receipts may be lost', { count: total });
  // Said too when there are none, so an operator who read that core is looking knows it is done.
  else if (!deps.stopping?.()) deps.log.info('no message is waiting for a delivery receipt a Redis loss may have taken: nothing to ask the carriers');
  return total;
}

async function publishQueries(bus: Pick<Bus, 'publish'>, page: readonly AwaitingReceipt[]): Promise<void> {
  const byChannel = new Map<string, AwaitingReceipt[]>();
  for (const m of page) {
    const list = byChannel.get(m.channel) ?? [];
    list.push(m);
    byChannel.set(m.channel, list);
  }
  for (const [channel, list] of byChannel)
    await bus.publish(
      topicName(channel),
      list.map((m) => ({
        key: m.destination,
        value: encodeJob({
          id: m.id,
          applicationId: m.applicationId,
          channel: m.channel,
          destination: m.destination,
          source: m.source || m.mask,
          content: m.content,
          acceptedAt: m.acceptedAt,
          ...(m.smsClass ? { smsClass: m.smsClass } : {}),
          carrierIds: m.carrierIds,
        }),
      })),
    );
}
