import { CommandId } from '../carriers/smpp/command-id';
import { MESSAGE_STATE_BY_STATE, formatReceiptText, type ReceiptState } from '../carriers/smpp/delivery-receipt';
import type { SmPdu } from '../carriers/smpp/pdu';
import { TlvTag, cStringTlv, uint8Tlv, type Tlv } from '../carriers/smpp/tlv';
import type { SmscSession } from './smsc-session';

export interface ReceiptOrder {
  systemId: string;
  /** The session the submit came in on; preferred while it is bound. */
  session: SmscSession;
  carrierMessageId: string;
  state: ReceiptState;
  errorCode: number;
  submitDate: number;
  /** Addresses of the original submit_sm (the receipt goes the other way). */
  sourceAddr: string;
  sourceTon: number;
  sourceNpi: number;
  destinationAddr: string;
  destTon: number;
  destNpi: number;
  text: string;
}

/**
 * Sends delivery receipts as deliver_sm after a delay, on the submitting
 * session if it is still bound, else on another session of the same
 * system_id; with none bound they wait for the next bind, and one whose
 * session drops before deliver_sm_resp is sent again. Like an SMSC, a
 * receipt is only done when acknowledged.
 */
export class ReceiptDispatcher {
  private readonly waiting = new Map<string, ReceiptOrder[]>();
  private generation = 0;
  sent = 0;

  constructor(
    private readonly sessionsOf: (systemId: string) => SmscSession[],
    /** Called each time a receipt's deliver_sm is handed to a session (again if it is resent). */
    private readonly onWritten: (order: ReceiptOrder) => void = () => undefined,
  ) {}

  schedule(order: ReceiptOrder, delayMs: number): void {
    const gen = this.generation;
    if (delayMs <= 0) setImmediate(() => gen === this.generation && this.deliver(order));
    else setTimeout(() => gen === this.generation && this.deliver(order), delayMs);
  }

  /** A session bound: give it what was waiting for its system_id. */
  flush(systemId: string): void {
    const orders = this.waiting.get(systemId);
    if (!orders) return;
    this.waiting.delete(systemId);
    for (const order of orders) this.deliver(order);
  }

  get waitingCount(): number {
    let n = 0;
    for (const list of this.waiting.values()) n += list.length;
    return n;
  }

  /** Forgets everything, including receipts whose timers are still running. */
  clear(): void {
    this.generation++;
    this.waiting.clear();
  }

  private deliver(order: ReceiptOrder): void {
    const session = order.session.canReceive ? order.session : this.sessionsOf(order.systemId).find((s) => s.canReceive);
    if (!session) {
      const list = this.waiting.get(order.systemId);
      if (list) list.push(order);
      else this.waiting.set(order.systemId, [order]);
      return;
    }
    order.session = session;
    const gen = this.generation;
    session.request(this.pdu(order)).then(
      () => {
        this.sent++;
      },
      () => {
        if (gen === this.generation) this.deliver(order);
      },
    );
    this.onWritten(order);
  }

  private pdu(o: ReceiptOrder): SmPdu {
    const failed = o.state !== 'delivered';
    const tlvs: Tlv[] = [
      cStringTlv(TlvTag.receipted_message_id, o.carrierMessageId),
      uint8Tlv(TlvTag.message_state, MESSAGE_STATE_BY_STATE[o.state]),
    ];
    // network_error_code: network type 3 (GSM) and a two-octet code.
    if (failed) tlvs.push({ tag: TlvTag.network_error_code, value: Buffer.of(3, (o.errorCode >> 8) & 0xff, o.errorCode & 0xff) });
    const text = formatReceiptText({
      id: o.carrierMessageId,
      state: o.state,
      submitDate: o.submitDate,
      doneDate: Date.now(),
      err: String(o.errorCode).padStart(3, '0'),
      text: o.text,
    });
    return {
      commandId: CommandId.deliver_sm,
      commandStatus: 0,
      sequenceNumber: 0,
      sourceAddrTon: o.destTon,
      sourceAddrNpi: o.destNpi,
      sourceAddr: o.destinationAddr,
      destAddrTon: o.sourceTon,
      destAddrNpi: o.sourceNpi,
      destinationAddr: o.sourceAddr,
      esmClass: 0x04,
      registeredDelivery: 0,
      dataCoding: 0,
      shortMessage: Buffer.from(text, 'latin1'),
      tlvs,
    };
  }
}

/** registered_delivery bits 0-1: 01 always, 10 on failure only, 11 (reserved; read as) on success only. */
export function wantsReceipt(registeredDelivery: number, outcome: ReceiptState): boolean {
  switch (registeredDelivery & 0x03) {
    case 1:
      return true;
    case 2:
      return outcome !== 'delivered';
    case 3:
      return outcome === 'delivered';
    default:
      return false;
  }
}

/** What to send back for an accepted submit_sm. */
export function receiptOrder(session: SmscSession, pdu: SmPdu, carrierMessageId: string, state: ReceiptState, text: string): ReceiptOrder {
  return {
    systemId: session.systemId,
    session,
    carrierMessageId,
    state,
    errorCode: state === 'delivered' ? 0 : state === 'expired' ? 27 : 1,
    submitDate: Date.now(),
    sourceAddr: pdu.sourceAddr,
    sourceTon: pdu.sourceAddrTon ?? 0,
    sourceNpi: pdu.sourceAddrNpi ?? 0,
    destinationAddr: pdu.destinationAddr,
    destTon: pdu.destAddrTon ?? 0,
    destNpi: pdu.destAddrNpi ?? 0,
    text,
  };
}
