import type { MessageRouteDetails } from '../../proto/gen/hermod/v1/message_routes';

/** The header of `hermod messages route`, tab-separated as its row (routeLine). */
export const ROUTE_HEADER = 'id\tstatus\troute\tcarrier_id\tsubmitted_at';

/**
 * One message's row of `hermod messages route`. A long SMS refused after its carrier took some of its parts shows
 * the route they went by and their carrier ids (`2 of 4 parts taken: id1,id2`): their receipts may still come.
 */
export function routeLine(r: MessageRouteDetails): string {
  const taken = r.takenPartCarrierIds;
  const carrier = taken.length > 0 ? `${taken.length} of ${r.parts || '?'} parts taken: ${taken.join(',')}` : r.carrierId || '-';
  return `${r.id}\t${r.status}\t${r.route || '(not submitted)'}\t${carrier}\t${r.submittedAt ? r.submittedAt.toISOString() : '-'}`;
}
