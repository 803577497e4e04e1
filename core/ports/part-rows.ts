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
 * A long message refused after the carrier took some of its parts was never
 * submitted whole: its taken parts' rows (takenPartRows) are what its route is
 * read from.
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

/**
 * The rows of the parts a carrier took of a long message it then refused (the failure's partCarrierIds): each
 * `submitted` (the carrier has it) with its carrier id and the route it went by, at the failure's time.
 */
export function takenPartRows(failed: { messageId: string; applicationId: string; at: number }, carrierIds: readonly string[], route: string): StatusEvent[] {
  return carrierIds.map((carrierId) => ({
    messageId: failed.messageId,
    applicationId: failed.applicationId,
    status: 'submitted',
    at: failed.at,
    detail: route,
    carrierId,
    errorCode: PART_ROW_CODE,
  }));
}
