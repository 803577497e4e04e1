import type { Socket } from 'node:net';
import { CommandId, isResponse } from './command-id';
import { CommandStatus } from './command-status';
import { FrameDecoder } from './frame-decoder';
import { DEFAULT_MAX_PDU_LENGTH, decodePdu, writePdu, type Pdu } from './pdu';
import { PduError } from './pdu-error';
import { PduWriter } from './pdu-writer';

export interface SmppConnectionHandler {
  onPdu(pdu: Pdu): void;
  /** Called once, after the socket has closed; `err` says why when it was not a clean close. */
  onClose(err: Error | undefined): void;
}

/** Flush early when this much is waiting, instead of growing until the end of the tick. */
const FLUSH_BYTES = 256 * 1024;

/**
 * One SMPP session's byte plumbing, shared by client and simulator: frames
 * and decodes what arrives (answering undecodable requests with
 * generic_nack), and encodes what is sent into one buffer that goes to the
 * socket in a single write per event-loop turn.
 */
export class SmppConnection {
  private readonly writer = new PduWriter();
  private readonly decoder: FrameDecoder;
  private flushScheduled = false;
  private seq = 0;
  private closed = false;
  private closeError: Error | undefined;
  /** PDUs received so far (used for liveness checks). */
  received = 0;

  constructor(
    readonly socket: Socket,
    private readonly handler: SmppConnectionHandler,
    maxPduLength = DEFAULT_MAX_PDU_LENGTH,
  ) {
    this.decoder = new FrameDecoder(maxPduLength);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => {
      this.closeError ??= err;
    });
    socket.on('close', () => {
      this.closed = true;
      this.handler.onClose(this.closeError);
    });
  }

  get isClosed(): boolean {
    return this.closed || this.socket.destroyed;
  }

  nextSequence(): number {
    this.seq = this.seq >= 0x7fffffff ? 1 : this.seq + 1;
    return this.seq;
  }

  /** Queues a PDU for the next flush. Throws PduError if it cannot be encoded; dropped when closed. */
  send(pdu: Pdu): void {
    if (this.isClosed) return;
    writePdu(this.writer, pdu);
    if (this.writer.length >= FLUSH_BYTES) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flushNow);
    }
  }

  private readonly flushNow = (): void => {
    this.flushScheduled = false;
    this.flush();
  };

  flush(): void {
    if (this.writer.length === 0 || this.isClosed) return;
    this.socket.write(this.writer.take());
  }

  /** Sends what is queued, then half-closes. */
  end(): void {
    this.flush();
    if (!this.isClosed) this.socket.end();
  }

  destroy(err?: Error): void {
    if (err) this.closeError ??= err;
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    try {
      this.decoder.push(chunk, this.onFrame);
    } catch (err) {
      // Framing is lost (absurd command_length): say so and drop the session.
      const e = err as PduError;
      this.send({ commandId: CommandId.generic_nack, commandStatus: e.status ?? CommandStatus.ESME_RINVCMDLEN, sequenceNumber: e.sequenceNumber ?? 0 });
      this.flush();
      this.destroy(err as Error);
    }
  }

  private readonly onFrame = (frame: Buffer): void => {
    if (this.isClosed) return;
    let pdu: Pdu;
    try {
      pdu = decodePdu(frame);
    } catch (err) {
      if (!(err instanceof PduError)) throw err;
      // Requests get a generic_nack; bad responses and alert_notification (which has none) are dropped.
      if (!isResponse(err.commandId) && err.commandId !== CommandId.alert_notification) {
        this.send({ commandId: CommandId.generic_nack, commandStatus: err.status, sequenceNumber: err.sequenceNumber });
      }
      return;
    }
    this.received++;
    try {
      this.handler.onPdu(pdu);
    } catch (err) {
      this.destroy(err as Error);
    }
  };
}
