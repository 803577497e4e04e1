/**
 * What Campaign Manager takes as a member's destination: an international
 * number (a plus, a country code, which never starts with 0, and up to 15
 * digits in all), or 3 to 15 digits a carrier routes as they are (a national
 * number, a `00` international prefix, a short code). `+000` is neither.
 */
export const MEMBER_DESTINATION_PATTERN = '^(?:\\+[1-9][0-9]{2,14}|[0-9]{3,15})$';

const MEMBER_DESTINATION = new RegExp(MEMBER_DESTINATION_PATTERN);

export function isMemberDestination(destination: string): boolean {
  return MEMBER_DESTINATION.test(destination);
}
