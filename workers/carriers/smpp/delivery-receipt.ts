import type { SmPdu } from './pdu';
import { displayAddress } from './smpp-address';
import { TlvTag, findTlv, tlvCString, tlvUint } from './tlv';
import { alphabetOf, decodeText } from './short-message';
import { networkErrorMeaning } from './network-error';

export type ReceiptState = 'delivered' | 'undeliverable' | 'expired' | 'rejected' | 'deleted' | 'unknown' | 'accepted';

export interface DeliveryReceipt {
  /** The message id the SMSC gave in submit_sm_resp, as the receipt wrote it. */
  carrierMessageId: string;
  /**
   * How it is written: `submit` as submit_sm_resp wrote it (the
   * receipted_message_id TLV, SMPP 3.4 section 5.3.2.12), or `receipt` as
   * the SMSC writes receipts' text ids (which may be another base). An SMSC
   * that writes its text id in the TLV too (the same id in both) writes it
   * the receipt's way.
   */
  idWrittenAs: 'submit' | 'receipt';
  state: ReceiptState;
  /** Network/SMSC error code ('000' or '' when none). */
  errorCode: string;
  /** What errorCode means, in words, when hermod knows (a GSM network_error_code; network-error.ts). */
  errorMeaning?: string;
  /** When the SMSC reached the final state (epoch ms, read as UTC), if it said. */
  doneDate: number | undefined;
  /** The stat word as received (DELIVRD, UNDELIV, ENROUTE…), for logs. */
  stat: string;
  /** Receipt addresses (`+E.164` for international numbers): source is the handset the original went to. */
  source: string;
  destination: string;
}

/** message_state values (SMPP 3.4 section 5.2.28). */
export const MessageState = {
  ENROUTE: 1,
  DELIVERED: 2,
  EXPIRED: 3,
  DELETED: 4,
  UNDELIVERABLE: 5,
  ACCEPTED: 6,
  UNKNOWN: 7,
  REJECTED: 8,
} as const;

const STATE_BY_MESSAGE_STATE: Record<number, ReceiptState> = {
  1: 'accepted', // ENROUTE: not final yet
  2: 'delivered',
  3: 'expired',
  4: 'deleted',
  5: 'undeliverable',
  6: 'accepted',
  7: 'unknown',
  8: 'rejected',
};

const STATE_BY_STAT: Record<string, ReceiptState> = {
  DELIVRD: 'delivered',
  DELIVERED: 'delivered',
  EXPIRED: 'expired',
  DELETED: 'deleted',
  UNDELIV: 'undeliverable',
  UNDELIVERABLE: 'undeliverable',
  ACCEPTD: 'accepted',
  ACCEPTED: 'accepted',
  ENROUTE: 'accepted',
  // Not final either, as some SMSCs write it (Kannel reads these as buffered).
  ACKED: 'accepted',
  BUFFRED: 'accepted',
  BUFFERD: 'accepted',
  BUFFERED: 'accepted',
  UNKNOWN: 'unknown',
  REJECTD: 'rejected',
  REJECTED: 'rejected',
};

export const STAT_BY_STATE: Record<ReceiptState, string> = {
  delivered: 'DELIVRD',
  undeliverable: 'UNDELIV',
  expired: 'EXPIRED',
  rejected: 'REJECTD',
  deleted: 'DELETED',
  unknown: 'UNKNOWN',
  accepted: 'ACCEPTD',
};

export const MESSAGE_STATE_BY_STATE: Record<ReceiptState, number> = {
  delivered: MessageState.DELIVERED,
  undeliverable: MessageState.UNDELIVERABLE,
  expired: MessageState.EXPIRED,
  rejected: MessageState.REJECTED,
  deleted: MessageState.DELETED,
  unknown: MessageState.UNKNOWN,
  accepted: MessageState.ACCEPTED,
};

/** esm_class message types that carry a receipt: SMSC delivery receipt, intermediate notification. */
export function isReceiptEsmClass(esmClass: number): boolean {
  return (esmClass & 0x04) !== 0 || (esmClass & 0x3c) === 0x20;
}

const RE_ID = /(?:^|\s)id:(\S+)/i;
const RE_STAT = /(?:^|\s)stat:(\w+)/i;
const RE_ERR = /(?:^|\s)err:(\w+)/i;
const RE_DONE = /(?:^|\s)done date:(\d{10,12})/i;

/**
 * Reads a delivery receipt deliver_sm: the SMPP 3.4 appendix B text
 * (`id:… sub:… dlvrd:… submit date:… done date:… stat:… err:… text:…`) and
 * the receipted_message_id / message_state / network_error_code TLVs, which
 * win when both are present. Returns undefined when no message id is found.
 */
export function parseDeliveryReceipt(pdu: SmPdu): DeliveryReceipt | undefined {
  let text = receiptText(pdu);
  const textField = text.search(/(?:^|\s)text:/i);
  if (textField >= 0) text = text.slice(0, textField); // the original's text could contain anything

  const tlvId = tlvCString(pdu.tlvs, TlvTag.receipted_message_id);
  const textId = RE_ID.exec(text)?.[1];
  const carrierMessageId = tlvId || textId;
  if (!carrierMessageId) return undefined;
  const idWrittenAs = tlvId && (textId === undefined || sameDigits(tlvId, textId) === false) ? 'submit' : 'receipt';

  const stat = RE_STAT.exec(text)?.[1]?.toUpperCase() ?? '';
  const messageState = tlvUint(pdu.tlvs, TlvTag.message_state);
  const state = (messageState !== undefined ? STATE_BY_MESSAGE_STATE[messageState] : undefined) ?? STATE_BY_STAT[stat] ?? 'unknown';

  const network = findTlv(pdu.tlvs, TlvTag.network_error_code)?.value;
  const errorCode = network && network.length === 3 ? String(network.readUInt16BE(1)).padStart(3, '0') : (RE_ERR.exec(text)?.[1] ?? '');
  const errorMeaning = network && network.length === 3 ? networkErrorMeaning(network[0]!, network.readUInt16BE(1)) : undefined;

  const done = RE_DONE.exec(text)?.[1];
  return {
    carrierMessageId,
    idWrittenAs,
    state,
    errorCode,
    ...(errorMeaning ? { errorMeaning } : {}),
    doneDate: done ? parseReceiptDate(done) : undefined,
    stat: stat || (messageState !== undefined ? STAT_BY_STATE[state] : ''),
    source: displayAddress(pdu.sourceAddr, pdu.sourceAddrTon),
    destination: displayAddress(pdu.destinationAddr, pdu.destAddrTon),
  };
}

const RE_FIELD = /(?:^|\s)(?:id|stat):/i;

/**
 * The receipt's text (short_message or message_payload). Some SMSCs copy the
 * original's data_coding into the receipt and write it in UCS-2 then; some
 * say UCS-2 and still write ASCII, so a UCS-2 reading with no field in it
 * gives way to Latin-1. Any other data coding is read as Latin-1: receipt
 * fields are ASCII, and a GSM 7-bit reading would turn `@`, `$` and `_` in
 * ids into other characters.
 */
export function receiptText(pdu: SmPdu): string {
  const body = findTlv(pdu.tlvs, TlvTag.message_payload)?.value ?? pdu.shortMessage;
  if (alphabetOf(pdu.dataCoding) === 'ucs2') {
    const text = decodeText(body, pdu.dataCoding);
    if (RE_FIELD.test(text)) return text;
  }
  return body.toString('latin1');
}

/** Whether two ids are the same digits, whatever case and leading zeros each was written with (`000F426B`, `f426b`). */
function sameDigits(a: string, b: string): boolean {
  const plain = (id: string) => id.replace(/^0+(?=.)/, '').toLowerCase();
  return plain(a) === plain(b);
}

/** YYMMDDhhmm[ss] (read as UTC) → epoch ms. */
export function parseReceiptDate(digits: string): number | undefined {
  if (!/^\d{10}(\d{2})?$/.test(digits)) return undefined;
  const n = (i: number) => Number(digits.slice(i, i + 2));
  const ms = Date.UTC(2000 + n(0), n(2) - 1, n(4), n(6), n(8), digits.length === 12 ? n(10) : 0);
  return Number.isNaN(ms) ? undefined : ms;
}

/** epoch ms → YYMMDDhhmm in UTC, the receipt date format of SMPP 3.4 appendix B. */
export function formatReceiptDate(ms: number): string {
  const d = new Date(ms);
  const p = (v: number) => String(v).padStart(2, '0');
  return p(d.getUTCFullYear() % 100) + p(d.getUTCMonth() + 1) + p(d.getUTCDate()) + p(d.getUTCHours()) + p(d.getUTCMinutes());
}

export interface ReceiptTextFields {
  id: string;
  state: ReceiptState;
  submitDate: number;
  doneDate: number;
  err?: string;
  /** The first characters of the original message (at most 20 are used). */
  text?: string;
}

/** The appendix B receipt text, as SMSCs put in short_message. */
export function formatReceiptText(f: ReceiptTextFields): string {
  const dlvrd = f.state === 'delivered' ? '001' : '000';
  const text = (f.text ?? '').slice(0, 20).replace(/[^\x20-\x7e]/g, '?');
  return `id:${f.id} sub:001 dlvrd:${dlvrd} submit date:${formatReceiptDate(f.submitDate)} done date:${formatReceiptDate(f.doneDate)} stat:${STAT_BY_STATE[f.state]} err:${f.err ?? '000'} text:${text}`;
}
