import type { MessageStatus } from '../domain/message-status';
import type { CarrierSnapshotState } from './carrier-snapshot';

/**
 * Hot state: what must be read or changed in well under a millisecond on the
 * hot path. Everything here can be rebuilt from history; nothing here is the
 * only copy of an accepted message.
 */
export interface StatusEntry {
  status: MessageStatus;
  /** Milliseconds since the epoch of the transition. */
  at: number;
}

export interface StatusAdvance {
  id: string;
  status: MessageStatus;
  at: number;
  /** The carrier's id the report came with, if any (hot state may forget it once the status is final). */
  carrierId?: string;
  /**
   * A carrier's report on its submit (a receipt, a read): applied only once
   * the message has reached `submitted`; refused while it is earlier, as a
   * step back is, for the caller to hold until the submit's own report is
   * applied. Refused too where hot state has no status for the message (it let
   * it go a minute after its final status, while another part's carrier id
   * lives on; it restarted): the caller reads its status back from history
   * first, or applies the report without this once it has waited for it.
   */
  onceSubmitted?: boolean;
  /**
   * The channel the status is about: `failed` follows `received` only on a channel whose carrier can take a message
   * and fail it afterwards (failsAfterReceived: an e-mail's bounce).
   */
  channel?: string;
}

/** What advanceStatusesNotingSkips answers for an advance: refused, applied, or applied where the message stood at `accepted`. */
export const ADVANCE_REFUSED = 0;
export const ADVANCE_APPLIED = 1;
/**
 * Applied to a message hot state had at `accepted`, and the status is one a message reaches only through its
 * channel's queue (`sent`, `submitted`, `received`, `read`): its `queued` was never taken (hot state did not answer
 * as it went to its channel), and whoever applied this tells it first.
 */
export const ADVANCE_SKIPPED_QUEUED = 2;
/**
 * Applied to a message hot state had at `queued`. Whoever took that `queued` wrote and told it, unless a crash
 * came between hot state taking it and its history write: after a start, the recorder asks history.
 */
export const ADVANCE_AFTER_QUEUED = 3;
export type AdvanceOutcome = typeof ADVANCE_REFUSED | typeof ADVANCE_APPLIED | typeof ADVANCE_SKIPPED_QUEUED | typeof ADVANCE_AFTER_QUEUED;

/** What an Idempotency-Key holds: the request it was first used for, and the answer once there is one. */
export interface IdempotencyRecord {
  fingerprint: string;
  /** The stored answer (serialized); absent while the first request is still being handled. */
  response?: string;
}

export interface LastMessage {
  messageId: string;
  applicationId: string;
}

export interface LastMessageEntry extends LastMessage {
  handset: string;
  source: string;
}

export interface AddressSender {
  address: string;
  applicationId: string;
  at: number;
}

export interface ReplyContext {
  /** The last message to the handset from any address. */
  lastToHandset?: LastMessage;
  /** The last message to the handset from this address. */
  lastFromAddress?: LastMessage;
  /** Applications that have sent from this address (within the state's time to live). */
  sendersOfAddress: string[];
}

export interface RateGrant {
  granted: number;
  /** Milliseconds until the window ends and a new allowance starts. */
  windowEndsInMs: number;
}

/** One application's share of a quota counter: take up to `wanted` of `limit`. */
export interface QuotaTake {
  /** The counter, one per application and period (e.g. `acme|day|2026-11-24`). */
  key: string;
  limit: number;
  wanted: number;
  /** How long a new counter lives: the rest of its period (and a little more). */
  ttlMs: number;
  /**
   * What a new counter starts from: the period's messages sent before it was made (a quota set mid-period, a hot
   * state that forgot its counters), as history counts them. A counter that exists keeps its count.
   */
  seed?: number;
}

/** An operator's block-list entry: `scope` is an application id, or '' for every application. */
export interface BlockEntry {
  scope: string;
  /** `+` and digits (normalizeBlockPrefix). */
  prefix: string;
  blocked: boolean;
}

/** An operator's word on a campaign: its messages go out, wait, or are never sent. */
export type CampaignControlState = 'running' | 'paused' | 'cancelled';

export interface HotState extends CarrierSnapshotState {
  /**
   * Moves each message forward to the given status unless it is already at the
   * same or a later stage (late and duplicate reports never move it back).
   * Returns, in order, whether each advance was applied.
   */
  advanceStatuses(advances: readonly StatusAdvance[]): Promise<boolean[]>;
  /** As advanceStatuses, saying also which applied ones skipped `queued` (ADVANCE_SKIPPED_QUEUED) or came right after it (ADVANCE_AFTER_QUEUED). */
  advanceStatusesNotingSkips(advances: readonly StatusAdvance[]): Promise<AdvanceOutcome[]>;
  getStatus(id: string): Promise<StatusEntry | undefined>;
  /**
   * Carrier message id → our message id, for delivery-report correlation. A
   * message's pairs in one call are its parts, each with its own carrier id
   * (see deliveredWhole).
   */
  putCarrierIds(pairs: readonly { carrierId: string; messageId: string }[]): Promise<void>;
  getMessageIdByCarrierId(carrierId: string): Promise<string | undefined>;
  /**
   * For each carrier's report that a part of a message was delivered, in
   * order, whether every part of it now was. A message sent in parts (a long
   * SMS: a submit, and a carrier id, a part) is the carrier ids
   * putCarrierIds stored for it in one call; each part counts once, however
   * often its report comes. A message sent whole, or one hot state knows no
   * parts of, is whole at its first report.
   */
  deliveredWhole(reports: readonly { messageId: string; carrierId: string }[]): Promise<boolean[]>;
  /**
   * For each message, in order, whether a carrier id was stored for it: the
   * carrier took it. Workers write this themselves, so it holds even while
   * core (which applies statuses) is down, and redelivered jobs are not sent twice.
   */
  wereSubmitted(messageIds: readonly string[]): Promise<boolean[]>;
  /**
   * Marks messages that must no longer be handed to a carrier (an Intelligent
   * Messaging attempt overtaken by its fallback). Workers read the mark before
   * every hand-over, so a job still queued or waiting to retry is dropped.
   */
  cancelSends(messageIds: readonly string[]): Promise<void>;
  /**
   * Claims the sending of each message for `token` (one worker's try at it)
   * for `ttlMs`, in order: true when the claim is this token's (taken now, or
   * renewed), false while another token holds it. Two workers handed the same
   * job at once (a partition taken over while its owner still worked on it)
   * send it once; a claim whose worker died runs out after `ttlMs`.
   */
  claimSends(claims: readonly { messageId: string; token: string }[], ttlMs: number): Promise<boolean[]>;
  /** Gives up claims, where the token still holds them. */
  releaseSends(claims: readonly { messageId: string; token: string }[]): Promise<void>;
  /** For each message, in order, whether its sending was cancelled. */
  wereCancelled(messageIds: readonly string[]): Promise<boolean[]>;
  /**
   * Sets an operator's control of a campaign, read by every fan-out and
   * worker. Moving it to running or cancelled also hands back (and forgets)
   * the messages workers parked while it was paused, atomically with the
   * change: the caller sends them again or ends them.
   */
  setCampaignControl(campaignId: number, control: CampaignControlState): Promise<string[]>;
  /** For each campaign, in order, its control (`running` when none was set). */
  campaignControls(campaignIds: readonly number[]): Promise<CampaignControlState[]>;
  /**
   * Parks messages a worker took off its topic, atomically with the check:
   * only while the campaign is paused. Returns the campaign's control; a
   * message is parked (and must not be sent) only when it is `paused`.
   */
  parkCampaignMessages(campaignId: number, messageIds: readonly string[]): Promise<CampaignControlState>;
  /**
   * The last outgoing message to each handset, overall and per source address
   * it was sent from, and which applications send from each address, so a
   * reply can be matched to the application and message it answers.
   * `source` is the address as a reply would name it (replyAddressKey), '' when unknown.
   */
  rememberLastMessages(entries: readonly LastMessageEntry[]): Promise<void>;
  /**
   * That an application sent from an address (a replyAddressKey) at `at`, as history tells it: what a
   * start of in-process state learns again, so a reply to the address from a handset it never messaged
   * still finds the application (`only-sender-from-address`). A send older than the state's time to live is none.
   */
  rememberSenders(entries: readonly AddressSender[]): Promise<void>;
  getLastMessage(handset: string): Promise<LastMessage | undefined>;
  /** What a reply from `handset` to `address` (a replyAddressKey) can be routed by, in one read. */
  getReplyContext(handset: string, address: string): Promise<ReplyContext>;
  /**
   * Takes up to `wanted` requests from the application's allowance of
   * `limitPerSecond` in the current one-second window (of the state's clock),
   * shared by every process using this state. Returns how many were granted
   * (0..wanted) and how long the window still runs.
   */
  takeRateTokens(key: string, limitPerSecond: number, wanted: number): Promise<RateGrant>;
  /**
   * The scopes whose opt-outs and block lists, loaded from history, are not
   * here (an empty list when all are), among `scopes` (an application id, or '' for the global block list): a
   * shared state (Redis, or one master of a Redis Cluster) that restarted
   * without its data, or was flushed, has lost them. While a scope's are
   * not, a shared state refuses areOptedOut and findBlocks touching it
   * (`unavailable`, retryable) rather than let a send through.
   */
  screeningMissing(scopes: readonly string[]): Promise<string[]>;
  /**
   * Whether this state has lost data since this object last asked: a shared
   * state (Redis, or any master of a Redis Cluster) that came back without
   * its data, or was flushed, found here or by another core that asked
   * first. The first call marks what the state holds, and is true only when
   * this call found it empty (a new Redis, or one back without its data
   * while no core looked; of cores starting together, one hears). Whatever a
   * core keeps there for a while (the answers of recent Idempotency-Keys)
   * is gone with it. State in core's own memory is lost only with core: never.
   */
  dataLost(): Promise<boolean>;
  /**
   * Takes, or renews, the lease `name` for `holder` for `ttlMs`: undefined
   * when it is `holder`'s now, else who holds it. A shared state (Redis)
   * keeps one holder for the whole deployment; state in core's own memory
   * serves one core, whose leases are always its own.
   */
  holdLease(name: string, holder: string, ttlMs: number): Promise<string | undefined>;
  /**
   * The scopes whose lists a read through this object (areOptedOut,
   * findBlocks) found lost and refused, since the last call, each once: the
   * reads' own notice, so core loads again what a send needed at once
   * without asking the state about every scope each second.
   */
  screeningRefused(): Promise<string[]>;
  /**
   * Core starts putting the lists of these scopes in: returns the token
   * markScreeningLoaded checks. Loads of several cores at once do not undo
   * one another.
   */
  beginScreeningLoad(scopes: readonly string[]): Promise<string>;
  /**
   * Says the lists of these scopes are loaded, unless a scope's data was lost
   * since beginScreeningLoad gave `token` (then false, and they must be loaded again).
   */
  markScreeningLoaded(scopes: readonly string[], token: string): Promise<boolean>;
  /** Opt-outs per application and handset (STOP replies); history keeps the durable copy. */
  setOptOuts(entries: readonly { applicationId: string; handset: string; optedOut: boolean }[]): Promise<void>;
  /** For each pair, in order, whether the handset opted out of the application. */
  areOptedOut(pairs: readonly { applicationId: string; handset: string }[]): Promise<boolean[]>;
  /**
   * Takes, for each counter in order, up to `wanted` of what is left of its
   * `limit`, atomically across every process using this state (N + 1
   * concurrent takes of one from a limit of N grant exactly N). Returns how
   * many each was granted (0..wanted).
   */
  takeQuota(takes: readonly QuotaTake[]): Promise<number[]>;
  /** Adds or removes block-list entries; history keeps the durable copy. */
  setBlocks(entries: readonly BlockEntry[]): Promise<void>;
  /**
   * For each send, in order, the longest prefix of its destination listed for
   * its application or globally (matchBlock), or undefined when none is.
   */
  findBlocks(sends: readonly { applicationId: string; destination: string }[]): Promise<(string | undefined)[]>;
  /**
   * Claims the key for a request as `claimId` for `ttlMs` (its lease); when
   * it was claimed before, returns what it holds instead.
   */
  claimIdempotencyKey(key: string, fingerprint: string, claimId: string, ttlMs: number): Promise<IdempotencyRecord | undefined>;
  /** Holds claim `claimId` another `ttlMs`; false once the key is no longer held by it (its lease ran out). */
  renewIdempotencyKey(key: string, claimId: string, ttlMs: number): Promise<boolean>;
  /**
   * Stores the answer of claim `claimId`, kept `ttlMs`, while the key is still
   * held by that claim or by nobody; false when another claim took the key
   * after this one's lease ran out (its answer, not this one, is kept).
   */
  completeIdempotencyKey(key: string, claimId: string, record: Required<IdempotencyRecord>, ttlMs: number): Promise<boolean>;
  /** Forgets claim `claimId` whose request failed, so the client may retry it; leaves any other claim or answer be. */
  releaseIdempotencyKey(key: string, claimId: string): Promise<void>;
  close(): Promise<void>;
}
