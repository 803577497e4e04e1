/** network_error_code's network type for GSM (SMPP 3.4 section 5.3.2.31). */
const GSM = 3;

/**
 * GSM MAP error codes (3GPP TS 29.002, chapter 17.6) as an SMSC reports them
 * in a receipt's network_error_code of network type GSM. Other network types,
 * and the `err:` of the receipt text, are the SMSC's own: hermod cannot
 * tell what those mean.
 */
const GSM_ERRORS: ReadonlyMap<number, string> = new Map([
  [1, 'unknown subscriber'],
  [3, 'unknown MSC'],
  [5, 'unidentified subscriber'],
  [6, 'absent subscriber (SM)'],
  [7, 'unknown equipment'],
  [8, 'roaming not allowed'],
  [9, 'illegal subscriber'],
  [10, 'bearer service not provisioned'],
  [11, 'teleservice not provisioned'],
  [12, 'illegal equipment'],
  [13, 'call barred'],
  [21, 'facility not supported'],
  [27, 'absent subscriber'],
  [31, 'subscriber busy for MT SMS'],
  [32, 'SM delivery failure'],
  [33, 'message waiting list full'],
  [34, 'system failure'],
  [35, 'data missing'],
  [36, 'unexpected data value'],
]);

/** What a network_error_code means, in words, when hermod knows (undefined otherwise). */
export function networkErrorMeaning(networkType: number, code: number): string | undefined {
  return networkType === GSM ? GSM_ERRORS.get(code) : undefined;
}
