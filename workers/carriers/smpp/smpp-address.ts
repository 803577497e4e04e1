import { findTrunkPrefix } from '../../../core/domain/trunk-prefix';

/** type_of_number values (SMPP 3.4 section 5.2.5). */
export const Ton = { UNKNOWN: 0, INTERNATIONAL: 1, NATIONAL: 2, NETWORK_SPECIFIC: 3, SUBSCRIBER: 4, ALPHANUMERIC: 5, ABBREVIATED: 6 } as const;
/** numbering_plan_indicator values (section 5.2.6). */
export const Npi = { UNKNOWN: 0, ISDN: 1 } as const;

export interface SmppAddress {
  addr: string;
  ton: number;
  npi: number;
}

/**
 * How an address is put on the wire: `+E.164` becomes international/ISDN
 * without the plus, and so does a number written with the `00` international
 * prefix (a contact list's `0064…`: no country code starts with 0, and a
 * carrier whose own international prefix is not 00 would misroute the digits);
 * other digits unknown/ISDN, for the carrier to route; anything else
 * alphanumeric.
 */
export function smppAddress(address: string): SmppAddress {
  if (/^\+\d+$/.test(address)) return { addr: address.slice(1), ton: Ton.INTERNATIONAL, npi: Npi.ISDN };
  if (/^00[1-9]\d*$/.test(address)) return { addr: address.slice(2), ton: Ton.INTERNATIONAL, npi: Npi.ISDN };
  if (/^\d*$/.test(address)) return { addr: address, ton: Ton.UNKNOWN, npi: Npi.ISDN };
  return { addr: address, ton: Ton.ALPHANUMERIC, npi: Npi.UNKNOWN };
}

/** The reverse of smppAddress: international numbers get their plus back. */
export function displayAddress(addr: string, ton: number | undefined): string {
  return ton === Ton.INTERNATIONAL && /^\d+$/.test(addr) ? `+${addr}` : addr;
}

/** Digits of the shortest handset number taken as one (short codes have 3 to 6). */
const MIN_SUBSCRIBER_DIGITS = 7;

/**
 * A handset's address as a carrier gives it (the sender of a reply), read as
 * opt-outs, block lists and reply routing key it. Carriers in many countries
 * give a local handset in its national format: type of number national
 * (`211234567`, or `0211234567` with the trunk prefix), or unknown with a
 * trunk prefix 0 (`0211234567`). With the carrier's country code
 * (`country_code` in the carriers file), such a number is its international
 * one (`+64211234567`), the handset hermod sends to; without one, or where the
 * digits do not tell the number, it stays as the carrier gave it. Bare digits
 * of unknown type not starting with 0 stay as they are: carriers send
 * international numbers so without their plus (`84912345678` is Vietnam's,
 * not Russia's 8 before 4912345678). A short code (under 7 digits, without
 * the trunk prefix) stays as it is, whatever type it is flagged.
 */
export function handsetAddress(addr: string, ton: number | undefined, countryCode: string | undefined): string {
  const national = ton === Ton.NATIONAL || (ton === Ton.UNKNOWN && /^0[1-9]/.test(addr));
  if (countryCode && national && /^\d+$/.test(addr)) {
    const trunk = findTrunkPrefix(countryCode + addr);
    if (trunk?.international !== undefined && trunk.international.length - 1 - countryCode.length >= MIN_SUBSCRIBER_DIGITS) return trunk.international;
    if (trunk === undefined && ton === Ton.NATIONAL && addr.length >= MIN_SUBSCRIBER_DIGITS) return `+${countryCode}${addr}`;
  }
  return displayAddress(addr, ton);
}
