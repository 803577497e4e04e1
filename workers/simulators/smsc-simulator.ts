import type { IdBase } from '../../lib/carriers-file';
import { asDataSm } from './as-data-sm';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { CommandId, isResponse } from '../carriers/smpp/command-id';
import { CommandStatus } from '../carriers/smpp/command-status';
import { ConcatReassembler } from '../carriers/smpp/concat-reassembler';
import type { BindPdu, Pdu, QuerySmPdu, SmPdu } from '../carriers/smpp/pdu';
import { planSmsAsWritten } from '../../core/domain/sms-segments';
import { concatFromSarTlvs, decodeText, splitUserData } from '../carriers/smpp/short-message';
import { displayAddress, smppAddress } from '../carriers/smpp/smpp-address';
import { TlvTag, findTlv, uint16Tlv } from '../carriers/smpp/tlv';
import { createOutcomePicker, type Outcome } from './outcome-picker';
import { MessageStates } from './message-states';
import { answerQuery, idNumbers, queryFailed } from './query-answer';
import { ReceiptDispatcher, receiptErrorCode, receiptOrder, wantsReceipt } from './receipt-dispatcher';
import { ReceiptStore } from './receipt-store';
import { type BindMode, SmscSession, type SessionStats } from './smsc-session';
import type { IdStyle, SmscSimulatorEvents, SmscSimulatorOptions, SubmitView } from './smsc-simulator-options';

const BIND_MODE_OF: Record<number, BindMode> = {
  [CommandId.bind_transceiver]: 'transceiver',
  [CommandId.bind_transmitter]: 'transmitter',
  [CommandId.bind_receiver]: 'receiver',
};

export type { SessionStats } from './smsc-session';
export type { AssembledMessage, SentReceipt, SimulatedSubmit, SmscSimulatorOptions } from './smsc-simulator-options';

export interface SmscSimulator extends EventEmitter<SmscSimulatorEvents> {
  start(): Promise<{ host: string; port: number }>;
  /** Closes the listener and every session; pending receipts are forgotten unless `storeFile` keeps them for the next start. */
  stop(): Promise<void>;
  /** While true, new connections are closed at once (an unreachable carrier). */
  refuse(on: boolean): void;
  /** Sends an MO text (split and concatenated as needed) to a bound session; resolves with the part count once acknowledged. */
  /**
   * Sends a message from a handset as deliver_sm. `userMessageReference` (the
   * handset's reference) and `concatReference` (for long texts) make a second
   * call with the same values a redelivery of the same message, as a carrier
   * would send after a lost deliver_sm_resp.
   */
  originate(mo: {
    source: string;
    destination: string;
    text: string;
    systemId?: string;
    userMessageReference?: number;
    concatReference?: number;
    /** Only these parts (1-based) of a long message, as a network that lost the others delivers it. */
    onlyParts?: number[];
    /** Each part on the next receiving session in turn, as an SMSC does with an ESME's several binds (default all on one). */
    spreadParts?: boolean;
    /** The sender's type of number, as written (`2`: national, as carriers give a local handset `0211234567`); default as smppAddress reads `source`. */
    sourceTon?: number;
  }): Promise<number>;
  /** Sends enquire_link to every bound session; resolves with how many answered. */
  enquireLink(): Promise<number>;
  sessions(): SessionStats[];
  readonly port: number;
  readonly submitCount: number;
  /** Most unanswered submit_sm seen on any one session. */
  readonly maxOutstanding: number;
  /** enquire_link received from clients. */
  readonly enquireLinkCount: number;
  readonly receiptCount: number;
  /** query_sm received from clients, each asking about one message id. */
  readonly queryCount: number;
  readonly boundCount: number;
}

/**
 * A client bound with this system_id is a handset, not an ESME: what it
 * submits is delivered to the bound ESMEs as a mobile-originated message (a
 * reply), as `hermod reply` does. It gets no receipt and counts as no submit.
 */
export const HANDSET_SYSTEM_ID = 'handset';

export function createSmscSimulator(options: SmscSimulatorOptions = {}): SmscSimulator {
  return new Simulator(options);
}

class Simulator extends EventEmitter<SmscSimulatorEvents> implements SmscSimulator {
  private readonly o: SmscSimulatorOptions;
  private readonly pick: () => Outcome;
  private readonly live = new Set<SmscSession>();
  private receipts: ReceiptDispatcher;
  private store: ReceiptStore | undefined;
  private readonly reassembler = new ConcatReassembler<string>();
  /** What became of each accepted submit, for query_sm (kept whether or not its receipt reached the ESME). */
  private readonly states: MessageStates;
  private server: net.Server | undefined;
  private host: string;
  private boundPort: number;
  private refusing = false;
  private nextSessionId = 0;
  private idBase: number;
  private idCounter = 0;
  private generation = 0;
  private enquireTimer: NodeJS.Timeout | undefined;
  private rateWindowStart = 0;
  private rateWindowCount = 0;
  private roundRobin = 0;
  submitCount = 0;
  maxOutstanding = 0;
  enquireLinkCount = 0;
  queryCount = 0;

  constructor(options: SmscSimulatorOptions) {
    super();
    this.o = options;
    this.host = options.host ?? '127.0.0.1';
    this.boundPort = options.port ?? 0;
    this.pick = createOutcomePicker(options.outcomes ?? { delivered: 1 }, options.seed);
    // Ids unique across restarts of the process unless a seed asks for reproducibility.
    this.idBase = options.seed === undefined ? Date.now() * 1024 : 0;
    this.receipts = this.dispatcher();
    this.states = new MessageStates(options.queryableMessages ?? 1_000_000);
  }

  private dispatcher(): ReceiptDispatcher {
    return new ReceiptDispatcher(
      (systemId) => [...this.live].filter((s) => s.systemId === systemId),
      (order) => {
        if (this.listenerCount('receipt') > 0)
          this.emit('receipt', {
            carrierMessageId: order.carrierMessageId,
            destination: displayAddress(order.destinationAddr, order.destTon),
            state: order.state,
            at: Date.now(),
          });
      },
      {
        store: this.store,
        retryMs: this.o.receiptRetryMs,
        log: this.o.log,
        receiptIdOf: receiptIdWriter(this.o.submitIds ?? 'hex', this.o.receiptIds ?? 'hex', this.o.idStyles?.receipt),
        idTlv: this.o.receiptIdTlv,
        anyBind: this.o.receiptsOn === 'any',
        asDataSm: this.o.deliverWith === 'data_sm',
      },
    );
  }

  /** Opens the receipt log and takes back what was owed before the last stop or crash. */
  private openStore(file: string): void {
    const store = ReceiptStore.open(file);
    this.store = store;
    const sent = this.receipts.sent;
    this.receipts = this.dispatcher();
    this.receipts.sent = sent;
    this.receipts.restore(store.owed.values());
    // A seeded simulator counts ids from a fixed base: continue past the ids still owed so none is given twice.
    for (const id of store.owed.keys()) {
      const n = parseInt(id, this.o.submitIds === 'decimal' ? 10 : 16) - this.idBase;
      if (Number.isSafeInteger(n) && n > this.idCounter) this.idCounter = n;
    }
    if (store.size > 0) this.o.log?.info('SMSC simulator restored owed receipts', { count: store.size, file });
  }

  get port(): number {
    return this.boundPort;
  }

  get receiptCount(): number {
    return this.receipts.sent;
  }

  get boundCount(): number {
    let n = 0;
    for (const s of this.live) if (s.isBound) n++;
    return n;
  }

  sessions(): SessionStats[] {
    return [...this.live].map((s) => s.stats());
  }

  refuse(on: boolean): void {
    this.refusing = on;
  }

  async start(): Promise<{ host: string; port: number }> {
    if (!this.server) {
      if (this.o.storeFile) this.openStore(this.o.storeFile);
      const server = net.createServer((socket) => this.onConnection(socket));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        // Exclusive: a cluster worker under `hermod start` binds its own port (port 0 shared through the primary would collide).
        server.listen({ port: this.boundPort, host: this.host, exclusive: true }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      this.server = server;
      this.boundPort = (server.address() as net.AddressInfo).port;
      if (this.o.enquireLinkMs) this.enquireTimer = setInterval(() => void this.enquireLink().catch(() => undefined), this.o.enquireLinkMs);
      this.o.log?.debug('SMSC simulator bound', { host: this.host, port: this.boundPort });
    }
    return { host: this.host, port: this.boundPort };
  }

  async stop(): Promise<void> {
    this.generation++;
    this.receipts.clear();
    this.store?.close();
    this.store = undefined;
    this.reassembler.clear();
    clearInterval(this.enquireTimer);
    const server = this.server;
    this.server = undefined;
    for (const s of this.live) s.conn.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async originate(mo: {
    source: string;
    destination: string;
    text: string;
    systemId?: string;
    userMessageReference?: number;
    concatReference?: number;
    /** Only these parts (1-based) of a long message, as a network that lost the others delivers it. */
    onlyParts?: number[];
    spreadParts?: boolean;
    sourceTon?: number;
  }): Promise<number> {
    const candidates = [...this.live].filter(
      (s) => s.canReceive && s.systemId !== HANDSET_SYSTEM_ID && (mo.systemId === undefined || s.systemId === mo.systemId),
    );
    if (candidates.length === 0) throw new Error('no bound session can receive');
    const first = this.roundRobin++;
    const sessionOf = (part: number) => candidates[(mo.spreadParts ? first + part : first) % candidates.length]!;
    // A handset's text as it typed it: hermod must take a decomposed reply as it comes.
    const plan = planSmsAsWritten(mo.text, mo.concatReference !== undefined ? { reference: mo.concatReference } : {});
    const tlvs = mo.userMessageReference !== undefined ? [uint16Tlv(TlvTag.user_message_reference, mo.userMessageReference)] : undefined;
    const src = smppAddress(mo.source);
    const dst = smppAddress(mo.destination);
    const statuses = await Promise.all(
      plan.segments
        .map((shortMessage, i) => ({ shortMessage, session: sessionOf(i) }))
        .filter((_, i) => !mo.onlyParts || mo.onlyParts.includes(i + 1))
        .map(({ shortMessage, session }) => {
          const pdu: SmPdu = {
            commandId: CommandId.deliver_sm,
            commandStatus: 0,
            sequenceNumber: 0,
            sourceAddrTon: mo.sourceTon ?? src.ton,
            sourceAddrNpi: src.npi,
            sourceAddr: src.addr,
            destAddrTon: dst.ton,
            destAddrNpi: dst.npi,
            destinationAddr: dst.addr,
            esmClass: plan.esmClass,
            registeredDelivery: 0,
            dataCoding: plan.dataCoding,
            shortMessage,
            tlvs,
          };
          return session.request(this.o.deliverWith === 'data_sm' ? asDataSm(pdu) : pdu);
        }),
    );
    const bad = statuses.find((s) => s !== 0);
    if (bad !== undefined) throw new Error(`deliver_sm answered with status 0x${bad.toString(16)}`);
    return plan.count;
  }

  async enquireLink(): Promise<number> {
    const bound = [...this.live].filter((s) => s.isBound);
    const results = await Promise.allSettled(bound.map((s) => s.request({ commandId: CommandId.enquire_link, commandStatus: 0, sequenceNumber: 0 })));
    return results.filter((r) => r.status === 'fulfilled' && r.value === 0).length;
  }

  private onConnection(socket: net.Socket): void {
    if (this.refusing || !this.server) {
      socket.destroy();
      return;
    }
    const session = new SmscSession(
      ++this.nextSessionId,
      socket,
      {
        onPdu: (s, pdu) => this.onPdu(s, pdu),
        onClose: (s) => {
          this.live.delete(s);
          this.emit('sessionClosed', s.stats());
        },
      },
      this.o.requestTimeoutMs ?? 10_000,
    );
    this.live.add(session);
  }

  private onPdu(session: SmscSession, pdu: Pdu): void {
    const { conn } = session;
    switch (pdu.commandId) {
      case CommandId.submit_sm:
        return this.onSubmit(session, pdu);
      case CommandId.query_sm:
        return this.onQuery(session, pdu);
      case CommandId.bind_transceiver:
      case CommandId.bind_transmitter:
      case CommandId.bind_receiver:
        if (this.o.binds && !this.o.binds.includes(BIND_MODE_OF[pdu.commandId])) {
          conn.send({ commandId: CommandId.generic_nack, commandStatus: CommandStatus.ESME_RINVCMDID, sequenceNumber: pdu.sequenceNumber });
          return;
        }
        return this.onBind(session, pdu);
      case CommandId.enquire_link:
        this.enquireLinkCount++;
        conn.send({ commandId: CommandId.enquire_link_resp, commandStatus: 0, sequenceNumber: pdu.sequenceNumber });
        return;
      case CommandId.unbind:
        conn.send({ commandId: CommandId.unbind_resp, commandStatus: 0, sequenceNumber: pdu.sequenceNumber });
        session.mode = undefined;
        conn.end();
        return;
      case CommandId.deliver_sm_resp:
      case CommandId.data_sm_resp:
      case CommandId.enquire_link_resp:
      case CommandId.generic_nack:
        session.answer(pdu.sequenceNumber, pdu.commandStatus);
        return;
      default:
        if (!isResponse(pdu.commandId)) {
          conn.send({ commandId: CommandId.generic_nack, commandStatus: CommandStatus.ESME_RINVCMDID, sequenceNumber: pdu.sequenceNumber });
        }
    }
  }

  private onBind(session: SmscSession, pdu: BindPdu): void {
    const { mode, status } = session.bind(pdu, this.o.credentials, this.o.systemId ?? 'hermod-smsc');
    this.o.log?.debug('bind', { session: session.id, systemId: pdu.systemId, mode, status });
    this.emit('bind', { sessionId: session.id, systemId: pdu.systemId, mode, status });
    if (status === CommandStatus.ESME_ROK && session.canReceive) this.receipts.flush(session.systemId);
  }

  private onSubmit(session: SmscSession, pdu: SmPdu): void {
    this.submitCount++;
    session.submitCount++;
    const respond = (status: number, messageId: string): void =>
      session.conn.send({ commandId: CommandId.submit_sm_resp, commandStatus: status, sequenceNumber: pdu.sequenceNumber, messageId });
    if (!session.canTransmit) return respond(CommandStatus.ESME_RINVBNDSTS, '');

    session.outstanding++;
    if (session.outstanding > session.maxOutstanding) session.maxOutstanding = session.outstanding;
    if (session.outstanding > this.maxOutstanding) this.maxOutstanding = session.outstanding;

    const body = findTlv(pdu.tlvs, TlvTag.message_payload)?.value ?? pdu.shortMessage;
    const { payload, concat: udhConcat } = splitUserData(body, (pdu.esmClass & 0x40) !== 0);
    const concat = udhConcat ?? concatFromSarTlvs(pdu.tlvs);
    const view: SubmitView = {
      sessionId: session.id,
      systemId: session.systemId,
      sequenceNumber: pdu.sequenceNumber,
      source: displayAddress(pdu.sourceAddr, pdu.sourceAddrTon),
      destination: displayAddress(pdu.destinationAddr, pdu.destAddrTon),
      esmClass: pdu.esmClass,
      dataCoding: pdu.dataCoding,
      registeredDelivery: pdu.registeredDelivery,
      shortMessage: body,
      text: decodeText(payload, pdu.dataCoding),
      ...(concat ? { concat } : {}),
    };

    if (session.systemId === HANDSET_SYSTEM_ID) {
      // A handset's message: on to the ESMEs as a reply, answered once one has it.
      this.submitCount--;
      session.submitCount--;
      this.originate({ source: view.source, destination: view.destination, text: view.text }).then(
        () => (session.outstanding--, respond(CommandStatus.ESME_ROK, '')),
        (err: unknown) => {
          this.o.log?.warn('could not deliver a handset message', { err, source: view.source });
          session.outstanding--;
          respond(CommandStatus.ESME_RSYSERR, '');
        },
      );
      return;
    }

    let status: number = CommandStatus.ESME_ROK;
    let outcome: Outcome | undefined;
    if (this.o.maxWindow !== undefined && session.outstanding > this.o.maxWindow) status = CommandStatus.ESME_RTHROTTLED;
    else if (this.overRate()) status = CommandStatus.ESME_RTHROTTLED;
    else {
      const forced = this.o.statusFor?.(view);
      if (forced) status = forced;
      else {
        outcome = this.pick();
        if (outcome === 'rejected') status = this.o.rejectStatus ?? CommandStatus.ESME_RSUBMITFAIL;
      }
    }
    const number = status === CommandStatus.ESME_ROK ? ++this.idCounter : 0;
    const carrierMessageId = number ? styled((this.idBase + number).toString(this.o.submitIds === 'decimal' ? 10 : 16), this.o.idStyles?.submit) : undefined;
    if (this.listenerCount('submit') > 0) this.emit('submit', { ...view, status, carrierMessageId, outcome });
    if (carrierMessageId) {
      this.o.log?.debug('submit accepted', {
        carrierMessageId,
        systemId: view.systemId,
        destination: view.destination,
        text: view.text,
        part: view.concat?.seq,
      });
      this.assemble(view, payload, carrierMessageId);
    }

    const gen = this.generation;
    const answer = (): void => {
      if (gen !== this.generation) return;
      session.outstanding--;
      if (carrierMessageId && outcome && outcome !== 'rejected') {
        // Final when its receipt is due, whether or not one was asked for.
        const delay = this.o.receiptDelayMs ?? 200;
        this.states.remember(number, outcome, receiptErrorCode(outcome), Date.now() + delay, pdu.sourceAddr);
        // The receipt is owed (and stored) before the submit is answered, as an SMSC commits before it acknowledges.
        if (wantsReceipt(pdu.registeredDelivery, outcome))
          this.receipts.schedule(receiptOrder(session, pdu, carrierMessageId, outcome, view.text, delay), delay);
      }
      respond(status, carrierMessageId ?? '');
    };
    const delay = this.o.submitRespDelayMs ?? 0;
    if (delay > 0) setTimeout(answer, delay);
    else answer();
  }

  private onQuery(session: SmscSession, pdu: QuerySmPdu): void {
    this.queryCount++;
    if (!session.canTransmit) return session.conn.send(queryFailed(pdu, CommandStatus.ESME_RINVBNDSTS));
    const bases = [this.o.submitIds ?? 'hex', this.o.receiptIds ?? 'hex'] as const;
    const numbers = idNumbers(pdu.messageId, bases).map((n) => n - this.idBase);
    session.conn.send(answerQuery(this.states, pdu, numbers));
  }

  private assemble(view: SubmitView, payload: Buffer, carrierMessageId: string): void {
    const { source, destination } = view;
    if (!view.concat || view.concat.total <= 1) {
      this.emit('message', { source, destination, text: view.text, parts: 1, carrierMessageId, carrierMessageIds: [carrierMessageId] });
      return;
    }
    const whole = this.reassembler.add(`${view.systemId}\u0000${source}\u0000${destination}`, view.concat, payload, carrierMessageId);
    if (!whole) return;
    this.emit('message', {
      source,
      destination,
      text: decodeText(whole.payload, view.dataCoding),
      parts: view.concat.total,
      carrierMessageId: whole.metas[0]!,
      carrierMessageIds: whole.metas,
    });
  }

  private overRate(): boolean {
    const limit = this.o.throttlePerSecond;
    if (!limit) return false;
    const now = Date.now();
    if (now - this.rateWindowStart >= 1000) {
      this.rateWindowStart = now;
      this.rateWindowCount = 0;
    }
    return ++this.rateWindowCount > limit;
  }
}

/** How a receipt writes the id its submit_sm_resp gave, when the carrier writes the two in different bases. */
function receiptIdWriter(submitIds: IdBase, receiptIds: IdBase, style: IdStyle | undefined): (id: string) => string {
  if (submitIds === receiptIds) return (id) => styled(id.replace(/^0+(?=.)/, '').toLowerCase(), style);
  return receiptIds === 'decimal' ? (id) => styled(BigInt(`0x${id}`).toString(10), style) : (id) => styled(BigInt(id).toString(16), style);
}

/** An id written in a carrier's style: upper-case hex, zero-padded. */
function styled(id: string, style: IdStyle | undefined): string {
  const digits = style?.upper ? id.toUpperCase() : id;
  return style?.width ? digits.padStart(style.width, '0') : digits;
}
