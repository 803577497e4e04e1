import { HermodError } from '../../../lib/errors';
import type { Logger } from '../../../lib/log';
import type { MoAssembler } from './mo-assembler';
import { DEFAULT_MAX_PDU_LENGTH } from './pdu';

export interface SmppClientOptions {
  host: string;
  port: number;
  systemId: string;
  password: string;
  systemType?: string;
  /** Most submit_sm awaiting submit_sm_resp at once (default 64). */
  windowSize?: number;
  /** Interval of our enquire_link; 0 turns it off (default 30 s). */
  enquireLinkMs?: number;
  /** How long a submit holds its window slot waiting for its submit_sm_resp (default 10 s). */
  submitTimeoutMs?: number;
  /**
   * How long, from its sending, a submit is waited for in all (default 2
   * min, at least submitTimeoutMs): an answer past the submit timeout still
   * settles it (the SMSC took it); only past this does it fail, retryably,
   * and is made again.
   */
  answerWaitMs?: number;
  /** Connect plus bind must finish within this (default 5 s). */
  bindTimeoutMs?: number;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** How long parts of a concatenated MO are kept waiting for the rest (default 2 min). */
  concatTimeoutMs?: number;
  maxPduLength?: number;
  /**
   * Receipts handed to listeners and not yet answered, at most (default
   * 2,048): past it the session stops reading until half are answered, so an
   * SMSC that sends receipts faster than hermod makes them durable waits on
   * TCP instead of filling this process's memory.
   */
  receiptsInHand?: number;
  /**
   * What this session binds as (default transceiver): a transmitter only
   * submits, a receiver only takes receipts and replies (SMSCs of SMPP 3.3,
   * and others, take no transceiver).
   */
  bindAs?: 'transceiver' | 'transmitter' | 'receiver';
  /**
   * Where the parts of long MO messages are collected; one shared by a
   * carrier's binds joins a message whose parts the SMSC delivered on
   * different binds (default one of this client's own).
   */
  moAssembler?: MoAssembler;
  log?: Logger;
}

export type ResolvedClientOptions = Required<Omit<SmppClientOptions, 'log' | 'moAssembler'>>;

/** Options with defaults filled in; throws HermodError 'invalid_attrib' for values SMPP cannot carry. */
export function resolveClientOptions(options: SmppClientOptions): ResolvedClientOptions {
  const given = Object.fromEntries(Object.entries(options).filter(([k, v]) => v !== undefined && k !== 'log' && k !== 'moAssembler'));
  const o: ResolvedClientOptions = {
    systemType: '',
    windowSize: 64,
    enquireLinkMs: 30_000,
    submitTimeoutMs: 10_000,
    answerWaitMs: 120_000,
    bindTimeoutMs: 5_000,
    reconnectMinMs: 250,
    reconnectMaxMs: 30_000,
    concatTimeoutMs: 120_000,
    maxPduLength: DEFAULT_MAX_PDU_LENGTH,
    receiptsInHand: 2048,
    bindAs: 'transceiver',
    ...(given as Partial<ResolvedClientOptions> & Pick<SmppClientOptions, 'host' | 'port' | 'systemId' | 'password'>),
  };
  if (o.systemId.length > 15 || o.password.length > 8 || o.systemType.length > 12) {
    throw new HermodError('invalid_attrib', 'SMPP system_id, password or system_type is longer than SMPP 3.4 allows (15, 8, 12)');
  }
  if (!(o.windowSize >= 1)) throw new HermodError('invalid_attrib', 'SMPP windowSize must be at least 1');
  o.answerWaitMs = Math.max(o.submitTimeoutMs, o.answerWaitMs);
  if (!(o.submitTimeoutMs > 0) || !(o.bindTimeoutMs > 0) || !(o.reconnectMinMs > 0) || o.reconnectMaxMs < o.reconnectMinMs) {
    throw new HermodError('invalid_attrib', 'SMPP timeouts must be positive and reconnectMaxMs at least reconnectMinMs');
  }
  return o;
}
