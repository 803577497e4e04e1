import { heldBackError } from '../../carrier';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { HermodError } from '../../../lib/errors';
import { createLogger, type Logger } from '../../../lib/log';
import { CommandId, isResponse } from './command-id';
import { CommandStatus, statusName } from './command-status';
import { isReceiptEsmClass, parseDeliveryReceipt, receiptText, type DeliveryReceipt } from './delivery-receipt';
import { MoAssembler, type MoMessage } from './mo-assembler';
import { INTERFACE_VERSION, type BindRespPdu, type Pdu, type QuerySmPdu, type QuerySmRespPdu, type SmPdu, type SmRespPdu } from './pdu';
import type { BindFailedEvent, SmppClientEvents } from './smpp-client-events';
import { resolveClientOptions, type ResolvedClientOptions, type SmppClientOptions } from './smpp-client-options';
import { buildQueryPdu, type QueryAnswer, type QueryRequest } from './query-request';
import { SmppConnection } from './smpp-connection';
import { buildSubmitPdu, statusError, type SubmitRequest, type SubmitResult } from './submit-request';
import { SubmitWindow, type SubmitJob } from './submit-window';
import { TlvTag, findTlv } from './tlv';

export type { DeliveryReceipt, ReceiptState } from './delivery-receipt';
export type { MoMessage } from './mo-assembler';
export type { QueryAnswer, QueryRequest } from './query-request';
export type { SmppClientOptions } from './smpp-client-options';
export type { SubmitRequest, SubmitResult } from './submit-request';

export interface SmppClient extends EventEmitter<SmppClientEvents> {
  /** Resolves with the SMSC's message id; rejects with HermodError (see statusError). */
  submit(request: SubmitRequest): Promise<SubmitResult>;
  /**
   * Asks the SMSC what became of a message it took (query_sm), on the bound
   * session, in the submit window: a query takes a slot as a submit does, so
   * submit_sm and query_sm outstanding together stay within windowSize (an
   * SMSC counts both), and waits its turn behind them. A non-zero
   * command_status (or a generic_nack: an SMSC without query_sm answers
   * ESME_RINVCMDID) rejects with statusError; no answer in submitTimeoutMs
   * (not waited for late, as a submit is: asking again is harmless), or the
   * connection lost, rejects retryably; a receiver bind or an unbound client
   * rejects at once.
   */
  query(request: QueryRequest): Promise<QueryAnswer>;
  /** Resolves once bound (at once if bound now); rejects if the client is closed first. */
  ready(): Promise<void>;
  /** Lets in-flight and queued submits finish (up to drainMs), unbinds, closes; no more reconnects. */
  close(drainMs?: number): Promise<void>;
  readonly windowInUse: number;
  readonly queueLength: number;
  readonly isBound: boolean;
}

export function createSmppClient(options: SmppClientOptions): SmppClient {
  return new SmppClientImpl(options);
}

/** A request in the window: a submit_sm, or a query_sm sharing its slots. */
type Job = Submit | Query;

interface Submit extends SubmitJob<SubmitResult> {
  kind: 'submit';
  pdu: SmPdu;
  onSent?: () => void;
  holdBack?: () => boolean;
}

interface Query extends SubmitJob<QueryAnswer> {
  kind: 'query';
  pdu: QuerySmPdu;
}

const EMPTY = Buffer.alloc(0);

const BIND_COMMANDS = {
  transceiver: CommandId.bind_transceiver,
  transmitter: CommandId.bind_transmitter,
  receiver: CommandId.bind_receiver,
} as const;

type State = 'connecting' | 'binding' | 'bound' | 'unbinding' | 'waiting' | 'closed';
type Deferred = ['receipt', DeliveryReceipt, (handled: boolean) => void] | ['mo', MoMessage];

class SmppClientImpl extends EventEmitter<SmppClientEvents> implements SmppClient {
  private readonly o: ResolvedClientOptions;
  private readonly log: Logger;
  private readonly window: SubmitWindow<Job>;
  private readonly mo: MoAssembler;
  private state: State = 'waiting';
  private conn: SmppConnection | undefined;
  private connClosed: Promise<void> = Promise.resolve();
  private bindSeq = 0;
  private bindTimer: NodeJS.Timeout | undefined;
  private enquireTimer: NodeJS.Timeout | undefined;
  /** Passes on long MO messages whose parts did not all come in time. */
  private readonly moTimer: NodeJS.Timeout;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private bindFailure: BindFailedEvent | undefined;
  private enquireOutstanding = false;
  private receivedAtEnquire = 0;
  private closing: Promise<void> | undefined;
  private readyWaiters: { resolve(): void; reject(err: HermodError): void }[] = [];
  private unbindAnswered: (() => void) | undefined;
  private deferred: Deferred[] = [];

  constructor(options: SmppClientOptions) {
    super();
    this.o = resolveClientOptions(options);
    this.log = options.log ?? createLogger({ component: 'smpp-client' });
    this.window = new SubmitWindow<Job>(
      this.o.windowSize,
      this.o.submitTimeoutMs,
      (job) => this.sendRequest(job),
      (job) =>
        job.kind === 'query'
          ? new HermodError('timeout', `no query_sm_resp within ${this.o.submitTimeoutMs} ms`, { retryable: true })
          : new HermodError('timeout', `no submit_sm_resp within ${this.o.answerWaitMs} ms`, { retryable: true }),
      this.o.answerWaitMs,
      (waiting) => this.emit('slowAnswer', { waiting, waitingMs: this.o.submitTimeoutMs }),
      // The last submit on the wire given up: reading may pause for the receipts now.
      () => this.conn && this.pauseIfFull(this.conn),
    );
    this.mo = options.moAssembler ?? new MoAssembler(this.o.concatTimeoutMs);
    this.mo.join();
    this.moTimer = setInterval(() => this.passOnIncomplete(false), Math.max(100, this.o.concatTimeoutMs / 4));
    this.moTimer.unref();
    this.connect();
  }

  get windowInUse(): number {
    return this.window.inUse;
  }

  get queueLength(): number {
    return this.window.queued;
  }

  get isBound(): boolean {
    return this.state === 'bound';
  }

  submit(request: SubmitRequest): Promise<SubmitResult> {
    if (this.o.bindAs === 'receiver') return Promise.reject(new HermodError('internal', 'an SMPP receiver bind cannot submit'));
    if (this.closing) return Promise.reject(new HermodError('unavailable', 'SMPP client is closed', { retryable: true }));
    if (this.state !== 'bound') return Promise.reject(new HermodError('unavailable', 'SMPP session is not bound', { retryable: true }));
    let pdu: SmPdu;
    try {
      pdu = buildSubmitPdu(request);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<SubmitResult>((resolve, reject) => {
      this.window.add({ kind: 'submit', pdu, resolve, reject, deadline: 0, onSent: request.onSent, holdBack: request.holdBack });
    });
  }

  query(request: QueryRequest): Promise<QueryAnswer> {
    if (this.o.bindAs === 'receiver') return Promise.reject(new HermodError('internal', 'an SMPP receiver bind cannot query'));
    if (this.closing) return Promise.reject(new HermodError('unavailable', 'SMPP client is closed', { retryable: true }));
    if (this.state !== 'bound') return Promise.reject(new HermodError('unavailable', 'SMPP session is not bound', { retryable: true }));
    let pdu: QuerySmPdu;
    try {
      pdu = buildQueryPdu(request);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<QueryAnswer>((resolve, reject) => {
      this.window.add({ kind: 'query', pdu, resolve, reject, deadline: 0, waitsLate: false });
    });
  }

  ready(): Promise<void> {
    if (this.closing) return Promise.reject(new HermodError('unavailable', 'SMPP client is closed', { retryable: true }));
    if (this.state === 'bound') return Promise.resolve();
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  close(drainMs = this.o.submitTimeoutMs): Promise<void> {
    this.closing ??= this.shutdown(drainMs);
    return this.closing;
  }

  /**
   * Each part of a long MO was acknowledged as it came, so the SMSC will not
   * send it again: one whose other parts never came (in `concatTimeoutMs`, or
   * by a stop) is passed on as far as it came, never dropped without a word.
   */
  private passOnIncomplete(all: boolean): void {
    for (const mo of this.mo.expire(Date.now(), all)) {
      this.log.warn('long reply passed on without all its parts', {
        source: mo.source,
        destination: mo.destination,
        parts: mo.parts,
        missing: mo.missing,
        why: all ? 'stopping' : `not all came within ${this.o.concatTimeoutMs} ms`,
      });
      this.defer(['mo', mo]);
    }
  }

  private async shutdown(drainMs: number): Promise<void> {
    clearTimeout(this.reconnectTimer);
    this.settleReady(new HermodError('unavailable', 'SMPP client is closed', { retryable: true }));
    const conn = this.conn;
    if (conn && this.state === 'bound') {
      await this.window.drained(drainMs);
      this.window.failAll(new HermodError('carrier_transient', 'SMPP client closed before the SMSC answered', { retryable: true }));
      if (!conn.isClosed) {
        this.state = 'unbinding';
        clearInterval(this.enquireTimer);
        conn.send({ commandId: CommandId.unbind, commandStatus: 0, sequenceNumber: conn.nextSequence() });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 1000);
          this.unbindAnswered = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        conn.end();
        const timer = setTimeout(() => conn.destroy(), 1000);
        await this.connClosed;
        clearTimeout(timer);
      }
    } else if (conn) {
      conn.destroy();
      await this.connClosed;
    }
    this.window.failAll(new HermodError('unavailable', 'SMPP client is closed', { retryable: true }));
    this.state = 'closed';
    // Parts kept coming while the binds drained, on this one or another of the carrier's: the last to close
    // passes on what is still incomplete, and before close() resolves (the listener hands it on to the bus).
    clearInterval(this.moTimer);
    if (this.mo.leave()) {
      this.passOnIncomplete(true);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private connect(): void {
    this.state = 'connecting';
    const socket = net.connect({ host: this.o.host, port: this.o.port });
    socket.setKeepAlive(true, 30_000);
    let closed!: () => void;
    this.connClosed = new Promise((resolve) => (closed = resolve));
    const conn = new SmppConnection(
      socket,
      {
        onPdu: (pdu) => this.onPdu(conn, pdu),
        onClose: (err) => {
          closed();
          this.onClose(conn, err);
        },
      },
      this.o.maxPduLength,
    );
    this.conn = conn;
    this.bindFailure = undefined;
    this.bindTimer = setTimeout(() => conn.destroy(new Error(`not bound within ${this.o.bindTimeoutMs} ms`)), this.o.bindTimeoutMs);
    socket.once('connect', () => {
      if (this.conn !== conn || this.closing) return;
      this.state = 'binding';
      this.bindSeq = conn.nextSequence();
      conn.send({
        commandId: BIND_COMMANDS[this.o.bindAs],
        commandStatus: 0,
        sequenceNumber: this.bindSeq,
        systemId: this.o.systemId,
        password: this.o.password,
        systemType: this.o.systemType,
        interfaceVersion: INTERFACE_VERSION,
      });
    });
  }

  private onPdu(conn: SmppConnection, pdu: Pdu): void {
    if (this.conn !== conn) return;
    switch (pdu.commandId) {
      case CommandId.submit_sm_resp:
      case CommandId.query_sm_resp:
        this.answered(conn, pdu);
        return;
      case CommandId.deliver_sm:
        this.onDeliver(conn, pdu, CommandId.deliver_sm_resp);
        return;
      case CommandId.data_sm:
        // A reply or receipt sent as data_sm: the same as a deliver_sm whose body is in message_payload.
        this.onDeliver(conn, { ...pdu, commandId: CommandId.deliver_sm, shortMessage: EMPTY, tlvs: pdu.tlvs ?? [] }, CommandId.data_sm_resp);
        return;
      case CommandId.enquire_link:
        conn.send({ commandId: CommandId.enquire_link_resp, commandStatus: 0, sequenceNumber: pdu.sequenceNumber });
        return;
      case CommandId.enquire_link_resp:
        this.enquireOutstanding = false;
        return;
      case CommandId.bind_transceiver_resp:
      case CommandId.bind_transmitter_resp:
      case CommandId.bind_receiver_resp:
        this.onBindResp(conn, pdu);
        return;
      case CommandId.generic_nack: {
        const job = this.window.take(pdu.sequenceNumber);
        if (job) {
          job.reject(statusError(pdu.commandStatus || CommandStatus.ESME_RUNKNOWNERR));
          this.window.pump();
          this.pauseIfFull(conn);
        } else if (this.state === 'binding' && pdu.sequenceNumber === this.bindSeq) {
          this.failBind(conn, pdu.commandStatus);
        }
        return;
      }
      case CommandId.unbind:
        conn.send({ commandId: CommandId.unbind_resp, commandStatus: 0, sequenceNumber: pdu.sequenceNumber });
        conn.end();
        return;
      case CommandId.unbind_resp:
        this.unbindAnswered?.();
        return;
      default:
        if (!isResponse(pdu.commandId)) {
          conn.send({ commandId: CommandId.generic_nack, commandStatus: CommandStatus.ESME_RINVCMDID, sequenceNumber: pdu.sequenceNumber });
        }
    }
  }

  private onBindResp(conn: SmppConnection, pdu: BindRespPdu): void {
    if (this.state !== 'binding' || pdu.sequenceNumber !== this.bindSeq) return;
    clearTimeout(this.bindTimer);
    if (pdu.commandStatus !== CommandStatus.ESME_ROK) return this.failBind(conn, pdu.commandStatus);
    this.state = 'bound';
    this.attempt = 0;
    this.enquireOutstanding = false;
    if (this.o.enquireLinkMs > 0) this.enquireTimer = setInterval(() => this.enquire(conn), this.o.enquireLinkMs);
    this.log.debug('SMPP bound', { host: this.o.host, port: this.o.port, smsc: pdu.systemId });
    this.emit('bound', { systemId: pdu.systemId });
    this.settleReady();
    this.window.pump();
  }

  private failBind(conn: SmppConnection, status: number): void {
    this.bindFailure = { reason: `bind refused: ${statusName(status)}`, status };
    conn.destroy();
  }

  private enquire(conn: SmppConnection): void {
    if (this.conn !== conn || this.state !== 'bound') return;
    // Reading is paused for receipts (see tookReceipt): its answer waits unread, and the link is not at fault.
    if (this.receiptsOut.get(conn)?.paused) return;
    if (this.enquireOutstanding && conn.received === this.receivedAtEnquire) {
      conn.destroy(new Error(`no answer to enquire_link within ${this.o.enquireLinkMs} ms`));
      return;
    }
    this.enquireOutstanding = true;
    this.receivedAtEnquire = conn.received;
    conn.send({ commandId: CommandId.enquire_link, commandStatus: 0, sequenceNumber: conn.nextSequence() });
  }

  /** Settles the request a submit_sm_resp or query_sm_resp answers, and gives its slot to the next. */
  private answered(conn: SmppConnection, pdu: SmRespPdu | QuerySmRespPdu): void {
    const job = this.window.peek(pdu.sequenceNumber);
    // Answered after its timeout, or with another command's answer (the SMSC's slip: it stays waited for).
    if (!job || pdu.commandId !== (job.kind === 'query' ? CommandId.query_sm_resp : CommandId.submit_sm_resp)) return;
    this.window.take(pdu.sequenceNumber);
    if (pdu.commandStatus !== CommandStatus.ESME_ROK) job.reject(statusError(pdu.commandStatus));
    else if (job.kind === 'submit') job.resolve({ messageId: pdu.messageId });
    else if (pdu.commandId === CommandId.query_sm_resp) job.resolve({ messageState: pdu.messageState, finalDate: pdu.finalDate, errorCode: pdu.errorCode });
    this.window.pump();
    this.pauseIfFull(conn);
  }

  private sendRequest(job: Job): number | undefined {
    const conn = this.conn;
    if (!conn || this.state !== 'bound') {
      job.reject(new HermodError('carrier_transient', 'SMPP session is not bound', { retryable: true }));
      return undefined;
    }
    // Waiting in the queue may take a while: an operator's pause or cancel meanwhile keeps it off the wire.
    if (job.kind === 'submit' && job.holdBack?.()) {
      job.reject(heldBackError());
      return undefined;
    }
    const seq = conn.nextSequence();
    job.pdu.sequenceNumber = seq;
    try {
      conn.send(job.pdu);
    } catch (err) {
      job.reject(new HermodError('invalid_attrib', (err as Error).message, { cause: err }));
      return undefined;
    }
    if (job.kind === 'submit' && job.onSent) {
      try {
        job.onSent();
      } catch (err) {
        this.log.error('submit onSent callback threw', { err });
      }
    }
    return seq;
  }

  /**
   * A receipt is answered only once its listener has it safe (a store-and-forward
   * SMSC stops owing it at our deliver_sm_resp, so answering first would lose it
   * to a crash in between); a refusal asks the SMSC to send it again later.
   */
  private onDeliver(conn: SmppConnection, pdu: SmPdu, respondWith: typeof CommandId.deliver_sm_resp | typeof CommandId.data_sm_resp): void {
    const answer = (commandStatus: number): void => {
      if (this.conn === conn) conn.send({ commandId: respondWith, commandStatus, sequenceNumber: pdu.sequenceNumber, messageId: '' });
    };
    if (isReceiptEsmClass(pdu.esmClass) || findTlv(pdu.tlvs, TlvTag.receipted_message_id)) {
      const receipt = parseDeliveryReceipt(pdu);
      if (receipt) {
        let answered = false;
        this.tookReceipt(conn);
        this.defer([
          'receipt',
          receipt,
          (handled) => {
            if (answered) return;
            answered = true;
            this.answeredReceipt(conn);
            answer(handled ? CommandStatus.ESME_ROK : CommandStatus.ESME_RX_T_APPN);
          },
        ]);
      } else {
        // Nothing can match it, now or when sent again: taken (as Kannel takes one, logging `FAILED DLR`) rather than asked for again forever.
        answer(CommandStatus.ESME_ROK);
        this.log.warn('delivery receipt without a message id', { text: receiptText(pdu), dataCoding: pdu.dataCoding });
      }
      return;
    }
    answer(CommandStatus.ESME_ROK);
    const mo = this.mo.add(pdu);
    if (mo) this.defer(['mo', mo]);
  }

  /**
   * Receipts of each connection in listeners' hands; whether it is `full` (no
   * new submits go out) and whether its reading is `paused`.
   */
  private readonly receiptsOut = new WeakMap<SmppConnection, { n: number; full: boolean; paused: boolean }>();

  /**
   * Past the bound the session sends no new submits, and stops reading once
   * every submit on the wire has its answer: those answers, and the
   * enquire_link_resp, come on the same socket as the receipts, and a submit
   * left unanswered behind paused reading would be given up and made again.
   */
  private tookReceipt(conn: SmppConnection): void {
    let out = this.receiptsOut.get(conn);
    if (!out) this.receiptsOut.set(conn, (out = { n: 0, full: false, paused: false }));
    out.n += 1;
    if (!out.full && out.n >= this.o.receiptsInHand) {
      out.full = true;
      this.window.hold();
      this.log.debug('SMPP receipts wait to be made durable; submits held', { inHand: out.n, unanswered: this.window.unanswered });
    }
    this.pauseIfFull(conn);
  }

  private pauseIfFull(conn: SmppConnection): void {
    const out = this.receiptsOut.get(conn);
    if (!out?.full || out.paused || this.window.unanswered > 0) return;
    out.paused = true;
    conn.socket.pause();
    this.log.debug('SMPP receipts wait to be made durable; reading paused', { inHand: out.n });
  }

  private answeredReceipt(conn: SmppConnection): void {
    const out = this.receiptsOut.get(conn);
    if (!out) return;
    out.n = Math.max(0, out.n - 1);
    if (out.full && out.n <= this.o.receiptsInHand / 2) {
      out.full = false;
      if (out.paused) {
        out.paused = false;
        // Nothing was read meanwhile: the enquire_link on the wire is not overdue (on this connection, if still its own).
        if (this.conn === conn) this.enquireOutstanding = false;
        if (!conn.socket.destroyed) conn.socket.resume();
      }
      if (this.conn === conn) this.window.release();
    }
  }

  /**
   * Receipts and MO are emitted on the next turn of the event loop, so a
   * receipt that arrives in the same TCP chunk as its submit_sm_resp reaches
   * listeners after the submit's promise callbacks have run.
   */
  private defer(event: Deferred): void {
    if (this.deferred.push(event) === 1) setImmediate(this.emitDeferred);
  }

  private readonly emitDeferred = (): void => {
    const events = this.deferred;
    this.deferred = [];
    for (const event of events) {
      try {
        if (event[0] === 'receipt') {
          if (this.listenerCount('receipt') === 0) event[2](true);
          else this.emit('receipt', event[1], event[2]);
        } else this.emit('mo', event[1]);
      } catch (err) {
        this.log.error(`an SMPP '${event[0]}' listener threw`, { err });
        if (event[0] === 'receipt') event[2](false);
      }
    }
  };

  private onClose(conn: SmppConnection, err: Error | undefined): void {
    if (this.conn !== conn) return;
    this.conn = undefined;
    clearTimeout(this.bindTimer);
    clearInterval(this.enquireTimer);
    const wasBound = this.state === 'bound' || this.state === 'unbinding';
    const reason = err?.message ?? (this.closing ? 'closed' : wasBound ? 'connection closed by the SMSC' : 'connection closed before bind');
    const lost = new HermodError('carrier_transient', `SMPP connection lost: ${reason}`, { retryable: true });
    const failed = this.window.failAll(lost);
    // Receipts held on the lost connection are the SMSC's to send again; a new bind starts with none.
    this.window.release();
    this.unbindAnswered?.();
    if (wasBound) {
      this.log.debug('SMPP disconnected', { reason, failed });
      // `closed`: hermod closed it (a stop), with nothing wrong on either side.
      this.emit('disconnected', { reason, failed, closed: this.closing !== undefined && err === undefined });
    } else if (!this.closing) {
      const failure = this.bindFailure ?? { reason };
      this.log.debug('SMPP bind failed', { ...failure, attempt: this.attempt });
      this.emit('bindFailed', failure);
    }
    if (this.closing) {
      this.state = 'closed';
      return;
    }
    this.state = 'waiting';
    const base = Math.min(this.o.reconnectMaxMs, this.o.reconnectMinMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    this.reconnectTimer = setTimeout(
      () => {
        this.reconnectTimer = undefined;
        if (!this.closing) this.connect();
      },
      base / 2 + (Math.random() * base) / 2,
    );
  }

  private settleReady(err?: HermodError): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const w of waiters) err ? w.reject(err) : w.resolve();
  }
}
