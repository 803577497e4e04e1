import type { StatusEvent } from './message-history';

/**
 * What marks a part row in history's events (its `error_code`): a long
 * message's `submitted` is kept once as the message's event, with its first
 * part's carrier id, and once more for each other part, with that part's
 * carrier id. A receipt for any part then finds its message by carrier id in
 * history once hot state has lost the parts (a kill -9 of core on the
 * in-process state, a Redis flushed); after such a loss the message is taken
 * as whole at its first delivered part. Part rows are not the message's
 * events: what history shows (the journey, the route) leaves them out.
 */
export const PART_ROW_CODE = 'carrier_part';

/** The part rows of a long message's `submitted` event: parts 2 to n, each with its own carrier id. */
export function partRows(
  submitted: { messageId: string; applicationId: string; status: StatusEvent['status']; at: number },
  partCarrierIds: readonly string[],
): StatusEvent[] {
  const n = partCarrierIds.length + 1;
  return partCarrierIds.map((carrierId, k) => ({
    messageId: submitted.messageId,
    applicationId: submitted.applicationId,
    status: submitted.status,
    at: submitted.at,
    detail: `part ${k + 2} of ${n}`,
    carrierId,
    errorCode: PART_ROW_CODE,
  }));
}
