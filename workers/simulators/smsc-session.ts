import type { Socket } from 'node:net';
import { CommandId, commandName } from '../carriers/smpp/command-id';
import { CommandStatus } from '../carriers/smpp/command-status';
import type { BindPdu, BindRespPdu, Pdu } from '../carriers/smpp/pdu';
import { TlvTag, uint8Tlv } from '../carriers/smpp/tlv';
import { SmppConnection } from '../carriers/smpp/smpp-connection';

export type BindMode = 'transceiver' | 'transmitter' | 'receiver';

const BIND_MODES = new Map<number, BindMode>([
  [CommandId.bind_transceiver, 'transceiver'],
  [CommandId.bind_transmitter, 'transmitter'],
  [CommandId.bind_receiver, 'receiver'],
]);

interface Awaiting {
  resolve(status: number): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** One ESME connection to the simulator: its bind, its counters, and the requests we sent it. */
export class SmscSession {
  readonly conn: SmppConnection;
  systemId = '';
  mode: BindMode | undefined;
  /** submit_sm received and not yet answered. */
  outstanding = 0;
  maxOutstanding = 0;
  submitCount = 0;
  private readonly awaiting = new Map<number, Awaiting>();

  constructor(
    readonly id: number,
    socket: Socket,
    handler: { onPdu(session: SmscSession, pdu: Pdu): void; onClose(session: SmscSession): void },
    private readonly requestTimeoutMs: number,
  ) {
    this.conn = new SmppConnection(socket, {
      onPdu: (pdu) => handler.onPdu(this, pdu),
      onClose: () => {
        const err = new Error(`session ${id} closed`);
        for (const a of this.awaiting.values()) {
          clearTimeout(a.timer);
          a.reject(err);
        }
        this.awaiting.clear();
        handler.onClose(this);
      },
    });
  }

  get isBound(): boolean {
    return this.mode !== undefined && !this.conn.isClosed;
  }

  get canReceive(): boolean {
    return this.isBound && this.mode !== 'transmitter';
  }

  get canTransmit(): boolean {
    return this.isBound && this.mode !== 'receiver';
  }

  /**
   * Answers a bind: refused when already bound or when `credentials` are
   * given and do not match; on success the session takes the system_id.
   */
  bind(pdu: BindPdu, credentials: { systemId: string; password: string }[] | undefined, smscSystemId: string): { mode: BindMode; status: number } {
    const mode = BIND_MODES.get(pdu.commandId)!;
    let status: number = CommandStatus.ESME_ROK;
    if (this.mode) status = CommandStatus.ESME_RALYBND;
    else if (credentials) {
      const account = credentials.find((c) => c.systemId === pdu.systemId);
      if (!account) status = CommandStatus.ESME_RINVSYSID;
      else if (account.password !== pdu.password) status = CommandStatus.ESME_RINVPASWD;
    }
    this.conn.send({
      commandId: ((pdu.commandId | 0x80000000) >>> 0) as BindRespPdu['commandId'],
      commandStatus: status,
      sequenceNumber: pdu.sequenceNumber,
      systemId: smscSystemId,
      tlvs: status === CommandStatus.ESME_ROK ? [uint8Tlv(TlvTag.sc_interface_version, 0x34)] : undefined,
    });
    if (status === CommandStatus.ESME_ROK) {
      this.systemId = pdu.systemId;
      this.mode = mode;
    }
    return { mode, status };
  }

  /** Sends a request (its sequence number is assigned here) and resolves with the response's command_status. */
  request(pdu: Pdu): Promise<number> {
    if (this.conn.isClosed) return Promise.reject(new Error(`session ${this.id} is closed`));
    const seq = this.conn.nextSequence();
    pdu.sequenceNumber = seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.awaiting.delete(seq);
        reject(new Error(`no response to ${commandName(pdu.commandId)} within ${this.requestTimeoutMs} ms`));
      }, this.requestTimeoutMs);
      this.awaiting.set(seq, { resolve, reject, timer });
      this.conn.send(pdu);
    });
  }

  /** Settles the request a response (or generic_nack) answers; false if none was waiting. */
  answer(sequenceNumber: number, status: number): boolean {
    const a = this.awaiting.get(sequenceNumber);
    if (!a) return false;
    this.awaiting.delete(sequenceNumber);
    clearTimeout(a.timer);
    a.resolve(status);
    return true;
  }

  stats(): SessionStats {
    return {
      id: this.id,
      systemId: this.systemId,
      mode: this.mode,
      bound: this.isBound,
      submitCount: this.submitCount,
      outstanding: this.outstanding,
      maxOutstanding: this.maxOutstanding,
    };
  }
}

export interface SessionStats {
  id: number;
  systemId: string;
  mode: BindMode | undefined;
  bound: boolean;
  submitCount: number;
  outstanding: number;
  maxOutstanding: number;
}
