import { decodeGsm7 } from '../../../core/domain/gsm7';
import { TlvTag, tlvUint, type Tlv } from './tlv';

export interface ConcatInfo {
  ref: number;
  total: number;
  seq: number;
}

export interface DecodedShortMessage {
  text: string;
  concat?: ConcatInfo;
}

/**
 * Separates a User Data Header from the payload when `hasUdh` (esm_class
 * UDHI) is set, and reads a concatenation element from it: IEI 0x00 (8-bit
 * reference) or 0x08 (16-bit reference). A malformed header is treated as
 * absent rather than dropping the message.
 */
export function splitUserData(buf: Buffer, hasUdh: boolean): { payload: Buffer; concat?: ConcatInfo } {
  if (!hasUdh || buf.length === 0) return { payload: buf };
  const udhl = buf[0]!;
  if (udhl + 1 > buf.length) return { payload: buf };
  const end = 1 + udhl;
  let concat: ConcatInfo | undefined;
  for (let i = 1; i + 2 <= end; ) {
    const iei = buf[i]!;
    const len = buf[i + 1]!;
    const d = i + 2;
    if (d + len > end) break;
    if (iei === 0x00 && len === 3) concat = { ref: buf[d]!, total: buf[d + 1]!, seq: buf[d + 2]! };
    else if (iei === 0x08 && len === 4) concat = { ref: (buf[d]! << 8) | buf[d + 1]!, total: buf[d + 2]!, seq: buf[d + 3]! };
    i = d + len;
  }
  if (concat && (concat.total < 1 || concat.seq < 1 || concat.seq > concat.total)) concat = undefined;
  return concat ? { payload: buf.subarray(end), concat } : { payload: buf.subarray(end) };
}

export type Alphabet = 'gsm7' | 'ucs2' | 'latin1' | 'binary';

/** The alphabet a data_coding value announces (SMPP 3.4 5.2.19 and GSM 03.38 coding groups). */
export function alphabetOf(dataCoding: number): Alphabet {
  const dc = dataCoding & 0xff;
  if (dc === 0x00) return 'gsm7';
  if (dc === 0x08) return 'ucs2';
  if (dc === 0x02 || dc === 0x04) return 'binary';
  if (dc <= 0x0f) return 'latin1'; // IA5, Latin-1 and the national sets we read as Latin-1
  if (dc < 0x40) return (['gsm7', 'binary', 'ucs2', 'gsm7'] as const)[(dc >> 2) & 3];
  if ((dc & 0xf0) === 0xf0) return dc & 0x04 ? 'binary' : 'gsm7';
  if ((dc & 0xf0) === 0xe0) return 'ucs2';
  if ((dc & 0xe0) === 0xc0) return 'gsm7';
  return 'latin1';
}

/**
 * The alphabet a body is in. data_coding 0 is the SMSC's default alphabet
 * (SMPP 3.4 5.2.19), which many SMSCs take to be Latin-1, not GSM 7-bit;
 * unpacked GSM septets never reach 0x80, so a body with an octet there is
 * Latin-1. Decide on a whole message, not part by part: a part of one in
 * Latin-1 may hold no accent.
 */
export function alphabetOfBody(body: Uint8Array, dataCoding: number): Alphabet {
  if ((dataCoding & 0xff) === 0x00 && body.some((octet) => octet >= 0x80)) return 'latin1';
  return alphabetOf(dataCoding);
}

/** Payload octets (no UDH) as text in `alphabet`, by default the one alphabetOfBody finds. */
export function decodeText(payload: Buffer, dataCoding: number, alphabet = alphabetOfBody(payload, dataCoding)): string {
  switch (alphabet) {
    case 'gsm7':
      return decodeGsm7(payload);
    case 'ucs2': {
      const n = payload.length & ~1;
      const swapped = Buffer.allocUnsafe(n);
      payload.copy(swapped, 0, 0, n);
      return swapped.swap16().toString('utf16le');
    }
    default:
      return payload.toString('latin1');
  }
}

/** A short_message (or message_payload) as text plus its concatenation info. */
export function decodeShortMessage(buf: Buffer, dataCoding: number, hasUdh: boolean): DecodedShortMessage {
  const { payload, concat } = splitUserData(buf, hasUdh);
  const text = decodeText(payload, dataCoding);
  return concat ? { text, concat } : { text };
}

/** Concatenation info from the sar_msg_ref_num / sar_total_segments / sar_segment_seqnum TLVs. */
export function concatFromSarTlvs(tlvs: readonly Tlv[] | undefined): ConcatInfo | undefined {
  const ref = tlvUint(tlvs, TlvTag.sar_msg_ref_num);
  const total = tlvUint(tlvs, TlvTag.sar_total_segments);
  const seq = tlvUint(tlvs, TlvTag.sar_segment_seqnum);
  if (ref === undefined || total === undefined || seq === undefined || seq < 1 || seq > total) return undefined;
  return { ref, total, seq };
}
