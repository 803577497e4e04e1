import { ConcatReassembler } from './concat-reassembler';
import type { SmPdu } from './pdu';
import { concatFromSarTlvs, decodeText, splitUserData } from './short-message';
import { displayAddress } from './smpp-address';
import { TlvTag, findTlv, tlvUint } from './tlv';

export interface MoMessage {
  source: string;
  destination: string;
  text: string;
  dataCoding: number;
  /** How many deliver_sm it was reassembled from. */
  parts: number;
  /**
   * What the SMSC or handset gave to tell this message from another with the
   * same text: the handset's message reference (user_message_reference) and
   * the concatenation reference; '' when it gave neither. A redelivered
   * deliver_sm carries the same ones.
   */
  carrierRef: string;
}

/**
 * Turns non-receipt deliver_sm into MO messages: body from short_message or
 * message_payload, concatenation from a UDH or sar_* TLVs, parts joined as
 * bytes (so a character split across parts survives) before decoding.
 */
export class MoAssembler {
  private readonly reassembler: ConcatReassembler;

  constructor(concatTimeoutMs = 120_000) {
    this.reassembler = new ConcatReassembler(concatTimeoutMs);
  }

  /** The whole message, or undefined while parts of it are still missing. */
  add(pdu: SmPdu): MoMessage | undefined {
    const body = findTlv(pdu.tlvs, TlvTag.message_payload)?.value ?? pdu.shortMessage;
    let { payload, concat } = splitUserData(body, (pdu.esmClass & 0x40) !== 0);
    concat ??= concatFromSarTlvs(pdu.tlvs);
    const source = displayAddress(pdu.sourceAddr, pdu.sourceAddrTon);
    const destination = displayAddress(pdu.destinationAddr, pdu.destAddrTon);
    let parts = 1;
    const userRef = tlvUint(pdu.tlvs, TlvTag.user_message_reference);
    const carrierRef = [userRef !== undefined ? `umr:${userRef}` : '', concat && concat.total > 1 ? `cat:${concat.ref}/${concat.total}` : '']
      .filter(Boolean)
      .join(' ');
    if (concat && concat.total > 1) {
      const whole = this.reassembler.add(`${source}\u0000${destination}`, concat, payload);
      if (!whole) return undefined;
      payload = whole.payload;
      parts = concat.total;
    }
    return { source, destination, text: decodeText(payload, pdu.dataCoding), dataCoding: pdu.dataCoding, parts, carrierRef };
  }
}
