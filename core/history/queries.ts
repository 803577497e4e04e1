import { HISTORY_TABLES } from './schema';
import { PART_ROW_CODE } from '../ports/part-rows';

/**
 * Every history read, as ClickHouse SQL with server-side `{name:Type}`
 * parameters. Values are never spliced into the text: the same strings run on
 * chDB (`queryBindAsync`) and on a ClickHouse server (`@clickhouse/client`
 * `query_params`). Results are read as JSONEachRow; the column aliases are the
 * field names of the port, so a row maps straight onto a record (see rows.ts).
 *
 * Times leave the database as epoch milliseconds (`toUnixTimestamp64Milli`, an
 * Int64: a number from chDB, a quoted string from a server with the default
 * output_format_json_quote_64bit_integers=1 — rows.ts accepts both) and come in
 * as Int64 milliseconds turned into DateTime64 by `fromUnixTimestamp64Milli`.
 *
 * Writes are not SQL text: each is one `INSERT INTO <table> FORMAT JSONEachRow`
 * of a whole batch (chDB `session.insert`, server `client.insert`), with the
 * tables and columns below.
 */

const { messages, events, applications, optOuts, blockList, shortLinks, linkClicks } = HISTORY_TABLES;

/** Tables and columns of the batch inserts (row builders in rows.ts produce exactly these keys). */
export const INSERTS = {
  messages: {
    table: messages,
    columns: [
      'id',
      'num_id',
      'application_id',
      'channel',
      'direction',
      'destination',
      'source',
      'content',
      'reference',
      'message_class',
      'mask',
      'sms_class',
      'scheduled_at',
      'integration_id',
      'via',
      'segments',
      'accepted_at',
      'reply_to',
      'reply_route',
    ],
  },
  events: {
    table: events,
    columns: ['message_id', 'application_id', 'status', 'stage', 'at', 'detail', 'carrier_id', 'error_code'],
  },
  shortLinks: {
    table: shortLinks,
    columns: ['code', 'url', 'message_id', 'application_id', 'created_at'],
  },
  linkClicks: {
    table: linkClicks,
    columns: ['code', 'at', 'user_agent', 'ip'],
  },
  optOuts: {
    table: optOuts,
    columns: ['application_id', 'handset', 'opted_out', 'at'],
  },
  blockList: {
    table: blockList,
    columns: ['scope', 'prefix', 'blocked', 'at'],
  },
  applications: {
    table: applications,
    columns: [
      'id',
      'name',
      'password_hash',
      'api_key_hash',
      'status_callback_url',
      'reply_callback_url',
      'callback_secret',
      'previous_callback_secret',
      'previous_callback_secret_until',
      'im_status_callback_url',
      'im_default_attempts',
      'source_addresses',
      'im_rate_limit',
      'quota_messages',
      'quota_period',
      'updated_at',
    ],
  },
} as const;

/** The stage below which a message is unfinished: `submitted` (carrier confirmed the send). */
export const SUBMITTED_STAGE = 3;

/** Columns of a message row `m`, aliased to MessageRecord's field names. */
export const MESSAGE_FIELDS = `
    m.id                                     AS id,
    m.num_id                                 AS numericId,
    m.application_id                         AS applicationId,
    m.channel                                AS channel,
    toString(m.direction)                    AS direction,
    m.destination                            AS destination,
    m.source                                 AS source,
    m.content                                AS content,
    m.reference                              AS reference,
    m.message_class                          AS messageClass,
    m.mask                                   AS mask,
    m.sms_class                              AS smsClass,
    toUnixTimestamp64Milli(m.scheduled_at)   AS scheduledAt,
    m.integration_id                         AS integrationId,
    m.via                                    AS via,
    m.segments                               AS segments,
    toUnixTimestamp64Milli(m.accepted_at)    AS acceptedAt,
    m.reply_to                               AS replyTo,
    m.reply_route                            AS replyRoute`;

/**
 * Latest status per message among the events matching `where`: the event with
 * the highest (stage, at), so a report that arrives late or twice never wins
 * over a later stage. Also the highest stage reached.
 */
const latestStatus = (where: string): string => `
    SELECT
        message_id,
        argMax(status, (stage, at)) AS last_status,
        argMax(at, (stage, at))     AS last_at,
        max(stage)                  AS last_stage
    FROM ${events}
    WHERE ${where}
    GROUP BY message_id`;

/**
 * One message of one application with its latest status.
 * Params: id String, applicationId String.
 *
 * Two point reads through the sorting keys, the events one as a scalar
 * subquery (cheaper than a join for one row). A message without any event
 * gets argMax's defaults (empty status); the adapter reads that as `accepted`
 * at acceptance.
 */
export const GET_MESSAGE = `
WITH
(
    SELECT (argMax(status, (stage, at)), argMax(at, (stage, at)))
    FROM ${events}
    WHERE message_id = {id:String}
) AS latest
SELECT ${MESSAGE_FIELDS},
    latest.1                                 AS status,
    toUnixTimestamp64Milli(latest.2)         AS statusAt
FROM ${messages} AS m
WHERE m.id = {id:String} AND m.application_id = {applicationId:String}
LIMIT 1`;

/**
 * Every status event of one message, oldest first (the operator console's journey); a long message's part rows
 * (part-rows.ts) are not its events.
 * Params: id String.
 */
export const LIST_MESSAGE_EVENTS = `
SELECT
    application_id                 AS applicationId,
    status                         AS status,
    toUnixTimestamp64Milli(at)     AS at,
    detail                         AS detail,
    carrier_id                     AS carrierId,
    error_code                     AS errorCode
FROM ${events}
WHERE message_id = {id:String} AND error_code != '${PART_ROW_CODE}'
ORDER BY at, stage
LIMIT 1000`;

/** The application of a message, whatever it is (core's own lookups). */
export const FIND_APPLICATION_OF_MESSAGE = `
SELECT application_id AS applicationId
FROM ${messages}
WHERE id = {id:String}
LIMIT 1`;

/** The id and application of a message by its numeric id, whatever its application. Params: numericId UInt64. */
export const FIND_MESSAGE_BY_NUMERIC_ID = `
SELECT id, application_id AS applicationId
FROM ${messages}
WHERE num_id = {numericId:UInt64}
LIMIT 1`;

/** Messages by id, whatever their application, without their status. Params: ids Array(String). */
export const FIND_MESSAGES = `
SELECT ${MESSAGE_FIELDS}
FROM ${messages} AS m
WHERE m.id IN {ids:Array(String)}
LIMIT 1 BY m.id`;

/** The UUID of an application's message by its numeric id (Gateway v1). */
export const FIND_ID_BY_NUMERIC_ID = `
SELECT id
FROM ${messages}
WHERE num_id = {numericId:UInt64} AND application_id = {applicationId:String}
LIMIT 1`;

/** Messages in the recovery window after the page cursor (parameters: since, afterAcceptedAt, afterId). */
const UNFINISHED_WINDOW = `
        accepted_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
        AND accepted_at >= fromUnixTimestamp64Milli({afterAcceptedAt:Int64}, 'UTC')
        AND (accepted_at, id) > (fromUnixTimestamp64Milli({afterAcceptedAt:Int64}, 'UTC'), {afterId:String})
        AND accepted_at < fromUnixTimestamp64Milli({acceptedBefore:Int64}, 'UTC')`;

/**
 * One page of messages whose latest stage is below `submitted` (accepted,
 * queued or sent), in acceptance order (accepted_at, id), after the cursor.
 * Params: since Int64 (ms; messages accepted earlier are not looked at),
 * afterAcceptedAt Int64 (ms), afterId String (0 and '' for the first page),
 * acceptedBefore Int64 (ms; messages accepted then or later are left out),
 * limit UInt32.
 *
 * Cost: the window condition prunes whole monthly partitions (and parts, by
 * their min/max accepted_at); the events side is read only for the ids in the
 * window after the cursor, through the events' sorting key, so later pages read
 * less. Duplicate message rows (a retried insert) are collapsed by LIMIT 1 BY.
 */
export const LIST_UNFINISHED = `
SELECT ${MESSAGE_FIELDS},
    s.last_status                            AS status,
    toUnixTimestamp64Milli(s.last_at)        AS statusAt
FROM
(
    SELECT *
    FROM ${messages}
    WHERE ${UNFINISHED_WINDOW}
    LIMIT 1 BY id
) AS m
INNER JOIN
(${latestStatus(`message_id IN (SELECT id FROM ${messages} WHERE ${UNFINISHED_WINDOW})`)}
    HAVING last_stage < ${SUBMITTED_STAGE}
) AS s ON s.message_id = m.id
ORDER BY m.accepted_at, m.id
LIMIT {limit:UInt32}`;

/**
 * One page of SMS messages whose latest stage is `submitted` (with the carrier, no final report yet), as
 * LIST_UNFINISHED pages (same parameters, same order), each with the carrier ids its `submitted` events carry
 * (a long message's part rows included; a message submitted twice, both submits'), sorted.
 */
export const LIST_AWAITING_RECEIPT = `
SELECT ${MESSAGE_FIELDS},
    s.last_status                            AS status,
    toUnixTimestamp64Milli(s.last_at)        AS statusAt,
    s.carrier_ids                            AS carrierIds
FROM
(
    SELECT *
    FROM ${messages}
    WHERE ${UNFINISHED_WINDOW} AND channel = 'sms'
    LIMIT 1 BY id
) AS m
INNER JOIN
(
    SELECT
        message_id,
        argMax(status, (stage, at))  AS last_status,
        argMax(at, (stage, at))      AS last_at,
        max(stage)                   AS last_stage,
        arraySort(groupUniqArrayIf(carrier_id, status = 'submitted' AND carrier_id != '')) AS carrier_ids
    FROM ${events}
    WHERE message_id IN (SELECT id FROM ${messages} WHERE ${UNFINISHED_WINDOW} AND channel = 'sms')
    GROUP BY message_id
    HAVING last_stage = ${SUBMITTED_STAGE} AND notEmpty(carrier_ids)
) AS s ON s.message_id = m.id
ORDER BY m.accepted_at, m.id
LIMIT {limit:UInt32}`;

/**
 * Our message id for a carrier's message id (delivery-report correlation).
 * Params: carrierId String. The bloom filter skips granules without it.
 */
/** The latest `submitted` event of an application's message: its detail names the route and carrier the SMS worker chose. */
export const GET_MESSAGE_ROUTE = `
SELECT detail, carrier_id AS carrierId, toUnixTimestamp64Milli(at) AS at
FROM ${events}
WHERE message_id = {id:String} AND status = 'submitted' AND error_code != '${PART_ROW_CODE}'
  AND message_id IN (SELECT id FROM ${messages} WHERE id = {id:String} AND application_id = {applicationId:String})
ORDER BY at DESC
LIMIT 1`;

/**
 * The parts a carrier took of an application's long message it then refused (part-rows.ts takenPartRows): their
 * carrier ids, each with the route it went by, in the order they were recorded.
 */
export const GET_TAKEN_PARTS = `
SELECT detail, carrier_id AS carrierId, toUnixTimestamp64Milli(at) AS at
FROM ${events}
WHERE message_id = {id:String} AND status = 'submitted' AND error_code = '${PART_ROW_CODE}'
  AND message_id IN (SELECT id FROM ${messages} WHERE id = {id:String} AND application_id = {applicationId:String})
ORDER BY at, carrier_id
LIMIT 255`;

/**
 * The message each carrier id names: of the messages that had it (an SMSC gives an id again once its counter wraps, or
 * after a restart), the one that got it last, as hot state keeps it. When a message got it is its first event with it.
 */
export const FIND_MESSAGE_IDS_BY_CARRIER_IDS = `
SELECT carrierId, argMax(mid, (gotAt, mid)) AS messageId
FROM (
  SELECT carrier_id AS carrierId, message_id AS mid, min(at) AS gotAt
  FROM ${events}
  WHERE carrier_id IN {carrierIds:Array(String)}
  GROUP BY carrier_id, message_id
)
GROUP BY carrierId`;

/** The latest status of each message, by stage then time, as GET_MESSAGE reads one (aliases apart from the columns they aggregate). Params: ids Array(String). */
export const LATEST_STATUSES = `
SELECT message_id AS id, argMax(status, (stage, at)) AS latestStatus, toUnixTimestamp64Milli(argMax(at, (stage, at))) AS latestAt
FROM ${events}
WHERE message_id IN {ids:Array(String)}
GROUP BY message_id`;

const APPLICATION_FIELDS = `
    id,
    name,
    password_hash                        AS passwordHash,
    api_key_hash                         AS apiKeyHash,
    status_callback_url                  AS statusCallbackUrl,
    reply_callback_url                   AS replyCallbackUrl,
    callback_secret                      AS callbackSecret,
    previous_callback_secret             AS previousCallbackSecret,
    toUnixTimestamp64Milli(previous_callback_secret_until) AS previousCallbackSecretUntil,
    im_status_callback_url               AS imStatusCallbackUrl,
    im_default_attempts                  AS imDefaultAttempts,
    source_addresses                     AS sourceAddresses,
    im_rate_limit                        AS imRateLimit,
    quota_messages                       AS quotaMessages,
    quota_period                         AS quotaPeriod,
    toUnixTimestamp64Milli(updated_at)   AS updatedAt`;

/**
 * The current version of an application by name. Params: name String.
 * FINAL collapses versions not yet merged; the filter applies to the result.
 */
/** Handsets opted out now (the latest row per pair says so); applicationId '' means all applications. */
export const LIST_OPT_OUTS = `
SELECT application_id AS applicationId, handset, opted_out AS optedOut, toUnixTimestamp64Milli(at) AS at
FROM ${optOuts} FINAL
WHERE opted_out = 1 AND ({applicationId:String} = '' OR application_id = {applicationId:String})
ORDER BY application_id, handset`;

/** Block-list entries in force (the latest row per pair blocks); scope NULL: every scope. */
export const LIST_BLOCKS = `
SELECT scope, prefix, toUnixTimestamp64Milli(at) AS at
FROM ${blockList} FINAL
WHERE blocked = 1 AND ({all:UInt8} = 1 OR scope = {scope:String})
ORDER BY scope, prefix`;

export const GET_SHORT_LINK = `
SELECT code, url, message_id AS messageId, application_id AS applicationId, toUnixTimestamp64Milli(created_at) AS createdAt
FROM ${shortLinks}
WHERE code = {code:String}
LIMIT 1`;

export const COUNT_LINK_CLICKS = `
SELECT count() AS clicks
FROM ${linkClicks}
WHERE code = {code:String}`;

export const LIST_APPLICATIONS = `
SELECT ${APPLICATION_FIELDS}
FROM ${applications} FINAL
ORDER BY name`;

export const GET_APPLICATION_BY_NAME = `
SELECT ${APPLICATION_FIELDS}
FROM ${applications} FINAL
WHERE name = {name:String}
LIMIT 1`;

/**
 * The application whose current version has this API key hash. Params:
 * apiKeyHash String. The condition is evaluated after FINAL, so a replaced key
 * no longer matches (ClickHouse keeps WHERE on non-key columns of a FINAL
 * query out of PREWHERE unless told otherwise).
 */
export const GET_APPLICATION_BY_API_KEY_HASH = `
SELECT ${APPLICATION_FIELDS}
FROM ${applications} FINAL
WHERE api_key_hash = {apiKeyHash:String} AND api_key_hash != ''
LIMIT 1`;

/** Health-check round trip. */
export const PING = 'SELECT 1 AS ok';

/** The memory the engine tracks as in use, in bytes (a server's total; chDB's, inside core). */
export const ENGINE_MEMORY = `SELECT value AS bytes FROM system.metrics WHERE metric = 'MemoryTracking'`;

/** Messages whose ids carry hashedUuid's mark (version 4, `bee`), accepted since a time, newest first. */
export const KEYED_MESSAGES_SINCE = `
SELECT id, num_id AS numericId, application_id AS applicationId
FROM ${messages}
WHERE accepted_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC') AND substring(id, 15, 1) = '4' AND substring(id, 20, 3) = {mark:String}
ORDER BY accepted_at DESC
LIMIT 1 BY id
LIMIT {limit:UInt32}`;

/**
 * The latest messages sent to a handset, written any of the ways its number is (`handsets`), since a time:
 * what a reply is routed by when hot state no longer knows the handset. Those that never went to it are left
 * out, as hot state never took them: one scheduled after `now`, or screened out (`blocked`, `deficient`).
 * Params: handsets Array(String), since Int64, now Int64.
 */
export const LAST_SENDS_TO = `
SELECT id AS messageId, application_id AS applicationId, source, mask, toUnixTimestamp64Milli(accepted_at) AS acceptedAt
FROM ${messages}
WHERE direction = 'MT' AND destination IN {handsets:Array(String)} AND accepted_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
  AND scheduled_at <= fromUnixTimestamp64Milli({now:Int64}, 'UTC')
  AND id NOT IN (
    SELECT message_id FROM ${events}
    WHERE status IN ('blocked', 'deficient') AND at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
      AND message_id IN (
        SELECT id FROM ${messages}
        WHERE direction = 'MT' AND destination IN {handsets:Array(String)} AND accepted_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
      )
  )
ORDER BY accepted_at DESC, id DESC
LIMIT 50`;

/**
 * Each source and mask applications sent from since a time, with the latest send of each: what
 * in-process hot state learns again at a start. Params: since Int64.
 */
/**
 * Messages of an application accepted since a time that took from its quota (MessageHistory.countQuotaUse).
 * Params: applicationId String, since Int64 (ms), exempt Array(String) (the \`via\` of messages that take none).
 */
export const COUNT_QUOTA_USE = `
SELECT count() AS used
FROM ${messages}
WHERE application_id = {applicationId:String} AND direction = 'MT'
  AND accepted_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')
  AND via NOT IN {exempt:Array(String)}
  AND id NOT IN (
    SELECT message_id FROM ${events}
    WHERE application_id = {applicationId:String} AND at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC') AND status IN ('blocked', 'deficient')
  )`;

export const SENDERS_SINCE = `
SELECT source, mask, application_id AS applicationId, toUnixTimestamp64Milli(max(accepted_at)) AS at
FROM ${messages}
WHERE direction = 'MT' AND accepted_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC') AND (source != '' OR mask != '')
GROUP BY source, mask, application_id`;
