import { MESSAGE_STATUSES } from '../domain/message-status';
import { jsonStringSql, sqlStringLiteral } from './json-string-sql';
import { HISTORY_TABLES } from './schema';

/**
 * Campaign Manager reads, in the same form as queries.ts: ClickHouse SQL with
 * server-side parameters, column aliases equal to the port's field names.
 * Big reads touch one contiguous range of a sorting key (members by
 * position, campaign messages by id, which sorts by position): members are
 * read in pages, the report as one stream.
 */
const { lists, campaigns, members, templates, messages, campaignReport, keyedImports } = HISTORY_TABLES;

export const CAMPAIGN_INSERTS = {
  members: {
    table: members,
    columns: ['owner_id', 'position', 'destination', 'param1', 'param2', 'param3', 'param4', 'param5', 'param6', 'opted_out'],
  },
  lists: {
    table: lists,
    columns: ['id', 'application_id', 'name', 'batch', 'email', 'remove_opt_outs', 'member_count', 'created_at', 'deleted', 'updated_at'],
  },
  campaigns: {
    table: campaigns,
    columns: [
      'id',
      'application_id',
      'name',
      'batch',
      'email',
      'schedule_at',
      'utc_offset_minutes',
      'content',
      'template',
      'mask',
      'opt_out_response',
      'reply_response',
      'remove_opt_outs',
      'member_count',
      'removed_opt_outs',
      'numeric_base',
      'state',
      'created_at',
      'updated_at',
    ],
  },
  templates: {
    table: templates,
    columns: ['id', 'application_id', 'name', 'content', 'updated_at'],
  },
  keyedImports: {
    table: keyedImports,
    columns: ['application_id', 'dedup_key', 'kind', 'id', 'error_messages', 'members', 'opted_out', 'at'],
  },
} as const;

/**
 * The newest import remembered under a key whose list or campaign row exists
 * (deleted or not). Params: applicationId String, dedupKey String.
 */
export const FIND_KEYED_IMPORT = `
SELECT kind, id, error_messages AS errorMessages, members, opted_out AS optedOut, toUnixTimestamp64Milli(at) AS at
FROM ${keyedImports} FINAL
WHERE application_id = {applicationId:String} AND dedup_key = {dedupKey:String}
  AND (id IN (SELECT id FROM ${lists} WHERE application_id = {applicationId:String})
    OR id IN (SELECT id FROM ${campaigns} WHERE application_id = {applicationId:String}))`;

/** A lightweight delete: the rows disappear from reads at once, the parts are rewritten later. Params: ownerId UInt64. */
export const DELETE_MEMBERS = `DELETE FROM ${members} WHERE owner_id = {ownerId:UInt64}`;

/** Params: ownerId UInt64, from UInt32, limit UInt32. */
export const READ_MEMBERS = `
SELECT position, destination, param1, param2, param3, param4, param5, param6, opted_out AS optedOut
FROM ${members}
WHERE owner_id = {ownerId:UInt64} AND position >= {from:UInt32}
ORDER BY position
LIMIT {limit:UInt32}`;

const LIST_FIELDS = `
    id,
    application_id                        AS applicationId,
    name,
    batch,
    email,
    remove_opt_outs                       AS removeOptOuts,
    member_count                          AS memberCount,
    toUnixTimestamp64Milli(created_at)    AS createdAt,
    deleted,
    toUnixTimestamp64Milli(updated_at)    AS updatedAt`;

/** Params: applicationId String. */
export const LIST_LISTS = `
SELECT ${LIST_FIELDS}
FROM ${lists} FINAL
WHERE application_id = {applicationId:String} AND deleted = 0
ORDER BY id`;

export const CAMPAIGN_FIELDS = `
    id,
    application_id                        AS applicationId,
    name,
    batch,
    email,
    toUnixTimestamp64Milli(schedule_at)   AS scheduleAt,
    utc_offset_minutes                    AS utcOffsetMinutes,
    content,
    template,
    mask,
    opt_out_response                      AS optOutResponse,
    reply_response                        AS replyResponse,
    remove_opt_outs                       AS removeOptOuts,
    member_count                          AS memberCount,
    removed_opt_outs                      AS removedOptOuts,
    numeric_base                          AS numericBase,
    state,
    toUnixTimestamp64Milli(created_at)    AS createdAt,
    toUnixTimestamp64Milli(updated_at)    AS updatedAt`;

/** Params: applicationId String, id UInt64. */
export const GET_CAMPAIGN = `
SELECT ${CAMPAIGN_FIELDS}
FROM ${campaigns} FINAL
WHERE application_id = {applicationId:String} AND id = {id:UInt64}`;

/** Params: id UInt64. */
export const FIND_CAMPAIGN = `
SELECT ${CAMPAIGN_FIELDS}
FROM ${campaigns} FINAL
WHERE id = {id:UInt64}`;

export const LIST_UNSENT_CAMPAIGNS = `
SELECT ${CAMPAIGN_FIELDS}
FROM ${campaigns} FINAL
WHERE state != 'sent'
ORDER BY schedule_at`;

/** The end of the highest numeric id block reserved by a campaign (see campaign-message-ids.ts). */
export const MAX_RESERVED_NUMERIC_ID = `
SELECT max(numeric_base + intDiv(member_count + 255, 256) * 4096) AS top
FROM ${campaigns}`;

/** Params: applicationId String. */
export const LIST_TEMPLATES = `
SELECT id, application_id AS applicationId, name, content, toUnixTimestamp64Milli(updated_at) AS updatedAt
FROM ${templates} FINAL
WHERE application_id = {applicationId:String}
ORDER BY id`;

/** Params: lo String, hi String. */
export const MESSAGE_IDS_IN_RANGE = `
SELECT DISTINCT id
FROM ${messages}
WHERE id >= {lo:String} AND id < {hi:String}`;

/**
 * Report rows of the campaign messages with ids in [lo, hi), in id (=
 * position) order, one per message from the campaign_report table (see
 * schema.ts), as positional columns: position, numeric id, mobile, status
 * ('' when the message has no status event yet), when it got that status
 * (its acceptance then), and when it first reached the carrier connection
 * (0 when it has not). A message whose row is not stored yet (only its
 * events are) is left out. Params: lo String, hi String.
 */
export const REPORT_RANGE = `
SELECT
    reinterpretAsUInt32(reverse(unhex(right(message_id, 8))))                     AS position,
    num_id                                                                        AS messageNumericId,
    destination                                                                   AS mobile,
    tupleElement(latest, 3)                                                       AS status,
    toUnixTimestamp64Milli(if(tupleElement(latest, 3) = '', assumeNotNull(accepted_at), tupleElement(latest, 2))) AS statusAt,
    toUnixTimestamp64Milli(ifNull(sent_at, toDateTime64(0, 3, 'UTC')))             AS sentAt
FROM ${campaignReport} FINAL
WHERE message_id >= {lo:String} AND message_id < {hi:String} AND accepted_at IS NOT NULL
ORDER BY message_id`;

/**
 * An instant as the report writes it, RFC 3339 at the campaign's fixed UTC
 * offset to the millisecond (2026-11-24T09:00:00.000+13:00): the offset
 * added to the UTC time, whose text then gets a T and the offset's name.
 */
const reportDate = (epochMs: string): string =>
  `concat(replaceOne(toString(fromUnixTimestamp64Milli(${epochMs} + {offsetMs:Int64}, 'UTC')), ' ', 'T'), {zone:String})`;

/**
 * Rows per block of the report's text (the engine's max_block_size; its own
 * default is 65,505). A block of a million-row report is about 190 bytes a
 * row, and the engine holds a block's columns and its text while it is
 * handed over: at its default a read took core's RSS about 150 MB higher than
 * at 8,192, for 0.1 s less over a million rows (bench/RESULTS.md, thirteenth
 * session).
 */
export const REPORT_BLOCK_ROWS = 8192;

/**
 * The report's rows as the Campaign Manager interface answers them, one JSON
 * object per message, formatted by the engine rather than row by row in
 * JavaScript: `{"list_name":…,"message_id":…,"mobile":…,"sent_date":…,
 * "status":…,"status_date":…,"timezone":…}`, the same rows in the same order
 * as REPORT_RANGE. Output as CustomSeparated with each row's text as it is
 * and a comma before each row, so the bytes are the rows joined by commas
 * after the first byte, however the engine splits them into blocks.
 *
 * Params: lo String, hi String; head String, the row's text up to the
 * message id (`{"list_name":"…","message_id":`, the campaign's name as JSON);
 * offsetMs Int64, the campaign's UTC offset; zone String, its name (+13:00).
 */
export const REPORT_JSON = `
WITH
    tupleElement(latest, 3)                                                       AS raw_status,
    toUnixTimestamp64Milli(if(raw_status = '', assumeNotNull(accepted_at), tupleElement(latest, 2))) AS status_ms,
    ifNull(toUnixTimestamp64Milli(sent_at), 0)                                    AS sent_ms
SELECT concat(
    {head:String}, toString(num_id),
    ',"mobile":', ${jsonStringSql('destination')},
    ',"sent_date":"', if(sent_ms > 0, ${reportDate('sent_ms')}, ''),
    '","status":"', if(raw_status IN (${MESSAGE_STATUSES.map(sqlStringLiteral).join(', ')}), raw_status, 'accepted'),
    '","status_date":"', ${reportDate('status_ms')},
    '","timezone":"', {zone:String}, '"}')
FROM ${campaignReport} FINAL
WHERE message_id >= {lo:String} AND message_id < {hi:String} AND accepted_at IS NOT NULL
ORDER BY message_id
SETTINGS format_custom_escaping_rule = 'Raw', format_custom_row_before_delimiter = ',', format_custom_row_after_delimiter = '',
    max_block_size = ${REPORT_BLOCK_ROWS}
FORMAT CustomSeparated`;
