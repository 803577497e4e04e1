import type { Logger } from '../../lib/log';
import { asDataSm } from './as-data-sm';
import { CommandId } from '../carriers/smpp/command-id';
import { CommandStatus } from '../carriers/smpp/command-status';
import { MESSAGE_STATE_BY_STATE, formatReceiptText, type ReceiptState } from '../carriers/smpp/delivery-receipt';
import type { SmPdu } from '../carriers/smpp/pdu';
import { TlvTag, cStringTlv, uint8Tlv, type Tlv } from '../carriers/smpp/tlv';
import type { OwedReceipt, ReceiptStore } from './receipt-store';
import type { SmscSession } from './smsc-session';

export interface ReceiptOrder extends OwedReceipt {
  /** The session the submit came in on, preferred while it is bound (none for a receipt replayed after a restart). */
  session?: SmscSession;
}

/**
 * Sends delivery receipts as deliver_sm after a delay, on the submitting
 * session if it is still bound, else on another session of the same
 * system_id; with none bound they wait for the next bind (store and
 * forward). Like an SMSC, a receipt is only done when a deliver_sm_resp
 * acknowledges it: one whose session drops first is sent again on the next
 * bind, and one not answered in time (or answered with a temporary error) is
 * sent again after `retryMs`. With a store, what is owed survives a restart.
 */
export class ReceiptDispatcher {
  private readonly waiting = new Map<string, ReceiptOrder[]>();
  private generation = 0;
  /** Receipts sent so far, for taking binds in turn. */
  private turn = 0;
  sent = 0;

  constructor(
    private readonly sessionsOf: (systemId: string) => SmscSession[],
    /** Called each time a receipt's deliver_sm is handed to a session (again if it is resent). */
    private readonly onWritten: (order: ReceiptOrder) => void = () => undefined,
    private readonly options: {
      store?: ReceiptStore;
      retryMs?: number;
      log?: Logger;
      receiptIdOf?: (carrierMessageId: string) => string;
      /** What receipted_message_id holds (smsc-simulator-options). */
      idTlv?: 'submit' | 'receipt' | 'none';
      /** Each receipt on the next bind of its system_id in turn, not on its submit's. */
      anyBind?: boolean;
      /** Receipts as data_sm rather than deliver_sm. */
      asDataSm?: boolean;
    } = {},
  ) {}

  /** A new receipt: recorded as owed (before the submit is answered), sent once due. */
  schedule(order: ReceiptOrder, delayMs: number): void {
    this.options.store?.owe(order);
    this.after(Math.max(0, delayMs), order);
  }

  /** Receipts owed from before a restart: each goes out when due and a bind of its system_id exists. */
  restore(owed: Iterable<OwedReceipt>): void {
    const now = Date.now();
    for (const o of owed) this.after(o.dueAt - now, { ...o });
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

  /** Forgets everything in memory, including receipts whose timers are still running (the store keeps what is owed). */
  clear(): void {
    this.generation++;
    this.waiting.clear();
  }

  private after(delayMs: number, order: ReceiptOrder): void {
    const gen = this.generation;
    if (delayMs <= 0) setImmediate(() => gen === this.generation && this.deliver(order));
    else setTimeout(() => gen === this.generation && this.deliver(order), delayMs);
  }

  private deliver(order: ReceiptOrder): void {
    const session = order.session?.canReceive && !this.options.anyBind ? order.session : this.pickSession(order.systemId);
    if (!session) {
      const list = this.waiting.get(order.systemId);
      if (list) list.push(order);
      else this.waiting.set(order.systemId, [order]);
      return;
    }
    order.session = session;
    const gen = this.generation;
    session.request(this.options.asDataSm ? asDataSm(this.pdu(order)) : this.pdu(order)).then(
      (status) => {
        if (gen !== this.generation) return;
        // ESME_RX_P_APPN: the ESME will never take it; anything else non-zero is worth another try.
        if (status === CommandStatus.ESME_ROK || status === CommandStatus.ESME_RX_P_APPN) {
          this.sent++;
          this.options.store?.ack(order.carrierMessageId);
          this.options.log?.debug('receipt acknowledged', { carrierMessageId: order.carrierMessageId, systemId: order.systemId, status });
        } else this.after(this.options.retryMs ?? 1000, order);
      },
      () => {
        if (gen !== this.generation) return;
        // Session gone: the next bound one takes it at once (or it waits for a bind); no answer in time: later.
        if (session.canReceive) this.after(this.options.retryMs ?? 1000, order);
        else this.deliver(order);
      },
    );
    this.onWritten(order);
  }

  private pickSession(systemId: string): SmscSession | undefined {
    const open = this.sessionsOf(systemId).filter((s) => s.canReceive);
    return open.length === 0 ? undefined : open[this.options.anyBind ? this.turn++ % open.length : 0];
  }

  private pdu(o: ReceiptOrder): SmPdu {
    const failed = o.state !== 'delivered';
    // The text's id is written as the carrier writes receipt ids, which may differ from its submit_sm_resp's;
    // receipted_message_id is the id submit_sm_resp gave (SMPP 3.4 section 5.3.2.12).
    const id = this.options.receiptIdOf?.(o.carrierMessageId) ?? o.carrierMessageId;
    const idTlv = this.options.idTlv ?? 'submit';
    const tlvs: Tlv[] =
      idTlv === 'none'
        ? []
        : [
            cStringTlv(TlvTag.receipted_message_id, idTlv === 'submit' ? o.carrierMessageId : id),
            uint8Tlv(TlvTag.message_state, MESSAGE_STATE_BY_STATE[o.state]),
          ];
    // network_error_code: network type 3 (GSM) and a two-octet code.
    if (failed && idTlv !== 'none') tlvs.push({ tag: TlvTag.network_error_code, value: Buffer.of(3, (o.errorCode >> 8) & 0xff, o.errorCode & 0xff) });
    const text = formatReceiptText({
      id,
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

/** The network error code a receipt of `state` carries (and query_sm answers). */
export function receiptErrorCode(state: ReceiptState): number {
  return state === 'delivered' ? 0 : state === 'expired' ? 27 : 1;
}

/** What to send back for an accepted submit_sm. */
export function receiptOrder(session: SmscSession, pdu: SmPdu, carrierMessageId: string, state: ReceiptState, text: string, delayMs: number): ReceiptOrder {
  return {
    systemId: session.systemId,
    session,
    carrierMessageId,
    state,
    errorCode: receiptErrorCode(state),
    submitDate: Date.now(),
    dueAt: Date.now() + delayMs,
    sourceAddr: pdu.sourceAddr,
    sourceTon: pdu.sourceAddrTon ?? 0,
    sourceNpi: pdu.sourceAddrNpi ?? 0,
    destinationAddr: pdu.destinationAddr,
    destTon: pdu.destAddrTon ?? 0,
    destNpi: pdu.destAddrNpi ?? 0,
    text,
  };
}
