import { HermodError, isErrorCode } from '../../lib/errors';
import type { BusRecord, DeliveredRecord, PublishOptions, SubscribeOptions } from '../ports/bus';
import type { HotState } from '../ports/state';

/**
 * What crosses a MessagePort between a thread that uses a bus and hot state
 * (thread-bus.ts, thread-state.ts) and the thread that owns them
 * (thread-bridge-host.ts). Buffers arrive on the other side as Uint8Arrays.
 */
export type ClientMessage =
  | { t: 'publish'; id: number; topic: string; records: WireRecord<BusRecord>[]; options?: PublishOptions }
  | { t: 'subscribe'; id: number; sub: number; topic: string; options: SubscribeOptions }
  | { t: 'unsubscribe'; id: number; sub: number }
  | { t: 'lag'; id: number; topic: string; group: string }
  | { t: 'state'; id: number; method: StateMethod; args: unknown[] }
  | { t: 'settled'; batch: number; error?: WireError };

export type HostMessage =
  | { t: 'result'; id: number; value?: unknown; error?: WireError }
  | { t: 'batch'; batch: number; sub: number; records: WireRecord<DeliveredRecord>[] };

/** A record as it crosses: its bytes, never a payload waiting to be encoded (a class instance arrives as a plain object). */
export type WireRecord<R extends BusRecord> = Omit<R, 'value'> & { value: Uint8Array };

export interface WireError {
  message: string;
  code?: string;
  retryable?: boolean;
}

/** Every hot-state call a thread may make (close is the owner's). */
export const STATE_METHODS = [
  'advanceStatuses',
  'advanceStatusesNotingSkips',
  'getStatus',
  'putCarrierIds',
  'getMessageIdByCarrierId',
  'deliveredWhole',
  'claimSends',
  'releaseSends',
  'wereSubmitted',
  'cancelSends',
  'wereCancelled',
  'rememberLastMessages',
  'rememberSenders',
  'getLastMessage',
  'getReplyContext',
  'takeRateTokens',
  'screeningMissing',
  'dataLost',
  'holdLease',
  'screeningRefused',
  'beginScreeningLoad',
  'markScreeningLoaded',
  'setOptOuts',
  'areOptedOut',
  'takeQuota',
  'setBlocks',
  'findBlocks',
  'claimIdempotencyKey',
  'renewIdempotencyKey',
  'completeIdempotencyKey',
  'releaseIdempotencyKey',
  'putCarrierSnapshots',
  'listCarrierSnapshots',
  'setCampaignControl',
  'campaignControls',
  'parkCampaignMessages',
] as const satisfies readonly Exclude<keyof HotState, 'close'>[];

export type StateMethod = (typeof STATE_METHODS)[number];

// A method added to HotState and not listed above fails to compile here.
type Unlisted = Exclude<Exclude<keyof HotState, 'close'>, StateMethod>;
const everyStateMethodListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyStateMethodListed;

export function toWireError(err: unknown): WireError {
  if (err instanceof HermodError) return { message: err.message, code: err.code, retryable: err.retryable };
  return { message: err instanceof Error ? err.message : String(err) };
}

export function fromWireError(e: WireError): Error {
  if (e.code && isErrorCode(e.code)) return new HermodError(e.code, e.message, e.retryable === undefined ? {} : { retryable: e.retryable });
  return new Error(e.message);
}

/** A structured-cloned Buffer comes back as a Uint8Array: view the same bytes as a Buffer again. */
export const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
