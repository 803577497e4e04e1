import { isMessageStatus, stageOf, type MessageStatus } from '../domain/message-status';
import type { ApplicationRecord, QuotaPeriod } from '../ports/account-store';
import type { Direction, MessageRecord, StatusEvent, StoredMessage } from '../ports/message-history';

/**
 * Conversions between the port's records and the rows of the history tables,
 * shared by every ClickHouse-backed adapter (chDB now, a server later).
 *
 * In: JSONEachRow lines whose keys are the columns in queries.ts INSERTS;
 * DateTime64 values are written as 'YYYY-MM-DD hh:mm:ss.sss' in UTC, which
 * every ClickHouse text parser reads the same way whatever its settings.
 * Out: rows whose keys are the port's field names, with Int64 and DateTime64
 * already converted to milliseconds by the SQL; 64-bit values may arrive as
 * numbers or as quoted strings depending on the engine's settings.
 */

/** Epoch milliseconds → DateTime64(3) text in UTC. */
export function dateTime64(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`not a time: ${ms}`);
  const t = Math.trunc(ms);
  // A message row holds its scheduled time (mostly 0) and its acceptance time, and the rows of a batch
  // mostly share a second: the date and time of day are formatted once a second, the milliseconds each time.
  if (t === 0) return EPOCH;
  const second = Math.floor(t / 1000);
  if (second !== lastSecond) {
    const iso = new Date(second * 1000).toISOString(); // 2024-05-01T12:34:56.000Z
    lastSecond = second;
    lastPrefix = `${iso.slice(0, 10)} ${iso.slice(11, 19)}.`;
  }
  const milli = t - second * 1000;
  return lastPrefix + (milli < 10 ? `00${milli}` : milli < 100 ? `0${milli}` : String(milli));
}

const EPOCH = '1970-01-01 00:00:00.000';
let lastSecond = Number.NaN;
let lastPrefix = '';

/** A numeric column from JSON output: a number, or a string for quoted 64-bit values. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value !== '') {
    const n = Number(value);
    if (Number.isFinite(n)) return n;
  }
  throw new TypeError(`expected a number from history, got ${JSON.stringify(value)}`);
}

const str = (value: unknown): string => (value === null || value === undefined ? '' : String(value));

/** One JSONEachRow line per item (no trailing newline needed by ClickHouse, but harmless). */
export function jsonEachRow<T>(items: readonly T[], toRow: (item: T) => Record<string, unknown>): Buffer {
  let text = '';
  for (const item of items) text += JSON.stringify(toRow(item)) + '\n';
  return Buffer.from(text, 'utf8');
}

/**
 * Parses a block of JSONCompactEachRow output (one JSON array of columns per
 * line) in one JSON.parse: a raw newline only ever ends a row, since JSON
 * escapes those inside strings.
 */
export function parseJsonCompactEachRow(text: string): unknown[][] {
  const body = text.trimEnd();
  return body === '' ? [] : (JSON.parse(`[${body.replaceAll('\n', ',')}]`) as unknown[][]);
}

/** Parses a JSONEachRow result. */
export function parseJsonEachRow(text: string): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) if (line.length > 0) rows.push(JSON.parse(line) as Record<string, unknown>);
  return rows;
}

export function messageRow(m: MessageRecord): Record<string, unknown> {
  return {
    id: m.id,
    num_id: m.numericId,
    application_id: m.applicationId,
    channel: m.channel,
    direction: m.direction,
    destination: m.destination,
    source: m.source,
    content: m.content,
    reference: m.reference,
    message_class: m.messageClass,
    mask: m.mask,
    sms_class: m.smsClass,
    scheduled_at: dateTime64(m.scheduledAt),
    integration_id: m.integrationId,
    via: m.via,
    segments: m.segments,
    accepted_at: dateTime64(m.acceptedAt),
    reply_to: m.replyTo,
    reply_route: m.replyRoute ?? '',
  };
}

export function eventRow(e: StatusEvent): Record<string, unknown> {
  return {
    message_id: e.messageId,
    application_id: e.applicationId,
    status: e.status,
    stage: stageOf(e.status),
    at: dateTime64(e.at),
    detail: e.detail,
    carrier_id: e.carrierId,
    error_code: e.errorCode,
  };
}

export function applicationRow(a: ApplicationRecord): Record<string, unknown> {
  return {
    id: a.id,
    name: a.name,
    password_hash: a.passwordHash,
    api_key_hash: a.apiKeyHash,
    status_callback_url: a.statusCallbackUrl,
    reply_callback_url: a.replyCallbackUrl,
    callback_secret: a.callbackSecret,
    previous_callback_secret: a.previousCallbackSecret,
    previous_callback_secret_until: dateTime64(a.previousCallbackSecretUntil),
    im_status_callback_url: a.imStatusCallbackUrl,
    im_default_attempts: a.imDefaultAttempts,
    source_addresses: a.sourceAddresses,
    im_rate_limit: a.imRateLimit,
    quota_messages: a.quotaMessages,
    quota_period: a.quotaPeriod,
    updated_at: dateTime64(a.updatedAt),
  };
}

/** A row of MESSAGE_FIELDS (FIND_MESSAGES). */
export function toMessageRecord(row: Record<string, unknown>): MessageRecord {
  return {
    id: str(row.id),
    numericId: toNumber(row.numericId ?? 0),
    applicationId: str(row.applicationId),
    channel: str(row.channel),
    direction: str(row.direction) as Direction,
    destination: str(row.destination),
    source: str(row.source),
    content: str(row.content),
    reference: str(row.reference),
    messageClass: str(row.messageClass),
    mask: str(row.mask),
    smsClass: toNumber(row.smsClass),
    scheduledAt: toNumber(row.scheduledAt),
    integrationId: str(row.integrationId),
    via: str(row.via),
    segments: toNumber(row.segments),
    acceptedAt: toNumber(row.acceptedAt),
    replyTo: str(row.replyTo ?? ''),
    // Only replies carry a route; other messages read back exactly as they were written.
    ...(row.replyRoute ? { replyRoute: str(row.replyRoute) } : {}),
  };
}

/** A row of GET_MESSAGE / LIST_UNFINISHED. A message without events reads as accepted at acceptance. */
export function toStoredMessage(row: Record<string, unknown>): StoredMessage {
  const record = toMessageRecord(row);
  const raw = str(row.status);
  let status: MessageStatus = 'accepted';
  if (raw !== '') {
    if (!isMessageStatus(raw)) throw new TypeError(`unknown status in history: ${raw}`);
    status = raw;
  }
  return { ...record, status, statusAt: raw !== '' ? toNumber(row.statusAt) : record.acceptedAt };
}

export function toApplication(row: Record<string, unknown>): ApplicationRecord {
  return {
    id: str(row.id),
    name: str(row.name),
    passwordHash: str(row.passwordHash),
    apiKeyHash: str(row.apiKeyHash),
    statusCallbackUrl: str(row.statusCallbackUrl ?? ''),
    replyCallbackUrl: str(row.replyCallbackUrl ?? ''),
    callbackSecret: str(row.callbackSecret ?? ''),
    previousCallbackSecret: str(row.previousCallbackSecret ?? ''),
    previousCallbackSecretUntil: toNumber(row.previousCallbackSecretUntil ?? 0),
    imStatusCallbackUrl: str(row.imStatusCallbackUrl ?? ''),
    imDefaultAttempts: str(row.imDefaultAttempts ?? ''),
    sourceAddresses: Array.isArray(row.sourceAddresses) ? row.sourceAddresses.map(String) : [],
    imRateLimit: row.imRateLimit === undefined || row.imRateLimit === null ? -1 : toNumber(row.imRateLimit),
    quotaMessages: toNumber(row.quotaMessages ?? 0),
    quotaPeriod: toQuotaPeriod(row.quotaPeriod),
    updatedAt: toNumber(row.updatedAt),
  };
}

function toQuotaPeriod(value: unknown): QuotaPeriod {
  return value === 'hour' || value === 'day' || value === 'month' ? value : '';
}
