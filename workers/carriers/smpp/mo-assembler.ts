import { ConcatReassembler } from './concat-reassembler';
import type { SmPdu } from './pdu';
import { alphabetOfBody, concatFromSarTlvs, decodeText, splitUserData } from './short-message';
import { displayAddress, handsetAddress } from './smpp-address';
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
  /** The parts (1-based) that never came, for a long message passed on without them; absent when whole. */
  missing?: number[];
}

interface PartMeta {
  source: string;
  destination: string;
  dataCoding: number;
  carrierRef: string;
}

/**
 * Turns non-receipt deliver_sm into MO messages: body from short_message or
 * message_payload, concatenation from a UDH or sar_* TLVs, parts joined as
 * bytes (so a character split across parts survives) before decoding.
 */
export class MoAssembler {
  private readonly reassembler: ConcatReassembler<PartMeta>;
  private clients = 0;

  /** `countryCode`: the carrier's, by which a sender given in its national format is read as its international number (smpp-address.ts). */
  constructor(
    concatTimeoutMs = 120_000,
    private readonly countryCode?: string,
  ) {
    this.reassembler = new ConcatReassembler<PartMeta>(concatTimeoutMs, 10_000, true, true);
  }

  /** A client (a bind) collects its parts here from now on. */
  join(): void {
    this.clients += 1;
  }

  /**
   * A client stops collecting here; true when it was the last, and what
   * waits can no longer be completed by another bind.
   */
  leave(): boolean {
    this.clients = Math.max(0, this.clients - 1);
    return this.clients === 0;
  }

  /**
   * Long messages whose parts did not all come within the timeout (with
   * `all`, every one still waiting, as at a stop): passed on with the parts
   * that came, an ellipsis where parts are missing, as Kannel passes them on,
   * rather than dropped without a word (each part was acknowledged to the
   * SMSC, which will not send it again).
   */
  expire(now = Date.now(), all = false): MoMessage[] {
    return this.reassembler.expire(now, all).map(({ total, parts, metas }) => {
      const meta = metas.find((m) => m !== undefined)!;
      // The arrays have holes where parts are missing: read by index (forEach would skip them).
      const runs: Buffer[][] = [[]];
      const missing: number[] = [];
      for (let i = 0; i < total; i++) {
        const part = parts[i];
        if (part) runs.at(-1)!.push(part);
        else {
          missing.push(i + 1);
          if (runs.at(-1)!.length > 0) runs.push([]);
        }
      }
      if (runs.at(-1)!.length === 0 && runs.length > 1) runs.pop();
      const alphabet = alphabetOfBody(Buffer.concat(runs.flat()), meta.dataCoding);
      const text = runs.map((run) => decodeText(Buffer.concat(run), meta.dataCoding, alphabet)).join('…');
      const ends = missing.at(-1) === total ? '…' : '';
      return { ...meta, text: `${parts[0] ? '' : '…'}${text}${ends}`, parts: total, missing };
    });
  }

  /** The whole message, or undefined while parts of it are still missing. */
  add(pdu: SmPdu, now = Date.now()): MoMessage | undefined {
    const body = findTlv(pdu.tlvs, TlvTag.message_payload)?.value ?? pdu.shortMessage;
    let { payload, concat } = splitUserData(body, (pdu.esmClass & 0x40) !== 0);
    concat ??= concatFromSarTlvs(pdu.tlvs);
    const source = handsetAddress(pdu.sourceAddr, pdu.sourceAddrTon, this.countryCode);
    const destination = displayAddress(pdu.destinationAddr, pdu.destAddrTon);
    let parts = 1;
    const userRef = tlvUint(pdu.tlvs, TlvTag.user_message_reference);
    const carrierRef = [userRef !== undefined ? `umr:${userRef}` : '', concat && concat.total > 1 ? `cat:${concat.ref}/${concat.total}` : '']
      .filter(Boolean)
      .join(' ');
    if (concat && concat.total > 1) {
      const whole = this.reassembler.add(
        `${source}\u0000${destination}`,
        concat,
        payload,
        { source, destination, dataCoding: pdu.dataCoding, carrierRef },
        now,
      );
      if (!whole) return undefined;
      payload = whole.payload;
      parts = concat.total;
    }
    return { source, destination, text: decodeText(payload, pdu.dataCoding), dataCoding: pdu.dataCoding, parts, carrierRef };
  }
}
