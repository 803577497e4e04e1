import type { IdBase } from '../../lib/carriers-file';

const HEX = /^[0-9a-f]+$/i;
const DECIMAL = /^[0-9]+$/;
/** Already as canonicalCarrierId writes it: no leading zero, hex in lower case. */
const CANONICAL_HEX = /^(?:0|[1-9a-f][0-9a-f]*)$/;
const CANONICAL_DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * A carrier's message id as hermod keeps it: the number the carrier wrote in
 * `base`, without leading zeros and with hex in lower case, so a receipt
 * that writes `F426B` or `000f426b` finds the message submit_sm_resp called
 * `f426b`. An id that is no number in its base is kept as written.
 */
export function canonicalCarrierId(id: string, base: IdBase): string {
  if (base === 'hex') return CANONICAL_HEX.test(id) || !HEX.test(id) ? id : BigInt(`0x${id}`).toString(16);
  return CANONICAL_DECIMAL.test(id) || !DECIMAL.test(id) ? id : BigInt(id).toString(10);
}

/**
 * A receipt's message id as canonicalCarrierId wrote its submit_sm_resp's
 * (`submitIds`), from an id written in `writtenIn`: a carrier may write hex in
 * one and decimal in the other. An id that is no number in `writtenIn` is
 * kept as written.
 */
export function receiptIdAsSubmitId(id: string, writtenIn: IdBase, submitIds: IdBase): string {
  if (writtenIn === submitIds) return canonicalCarrierId(id, submitIds);
  if (writtenIn === 'decimal') return DECIMAL.test(id) ? BigInt(id).toString(16) : id;
  return HEX.test(id) ? BigInt(`0x${id}`).toString(10) : id;
}
