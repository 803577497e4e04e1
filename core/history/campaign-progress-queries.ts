import { CAMPAIGN_FIELDS } from './campaign-queries';
import { HISTORY_TABLES } from './schema';

/** Campaign control's reads (same form as campaign-queries.ts). */
const { campaigns, messages, events } = HISTORY_TABLES;

/** Params: applicationId String ('' : every application). */
export const LIST_CAMPAIGNS = `
SELECT ${CAMPAIGN_FIELDS}
FROM ${campaigns} FINAL
WHERE {applicationId:String} = '' OR application_id = {applicationId:String}
ORDER BY created_at DESC, id DESC`;

/**
 * A campaign's messages in [lo, hi) counted by latest status by (stage, at),
 * the same latest status the report shows. Params: lo String, hi String, since Int64 (epoch ms).
 */
export const PROGRESS_RANGE = `
SELECT
    count()                                                                              AS messages,
    countIf(sent_ms > 0 AND last_status != 'dead')                                       AS handed,
    countIf(last_status IN ('received', 'read'))                                         AS delivered,
    countIf(last_status IN ('rejected', 'failed', 'expired', 'frozen'))                  AS failed,
    countIf(last_status = 'blocked')                                                     AS blocked,
    countIf(last_status = 'deficient')                                                   AS deficient,
    countIf(last_status = 'dead')                                                        AS dead,
    countIf(last_status IN ('', 'accepted', 'queued'))                                   AS waiting,
    countIf(sent_ms >= {since:Int64} AND last_status != 'dead')                          AS handedSince
FROM
(
    SELECT m.id AS id, e.last_status AS last_status, toUnixTimestamp64Milli(e.sent_at) AS sent_ms
    FROM
    (
        SELECT DISTINCT id
        FROM ${messages}
        WHERE id >= {lo:String} AND id < {hi:String}
    ) AS m
    LEFT JOIN
    (
        SELECT
            message_id,
            argMax(status, (stage, at))                 AS last_status,
            minIf(at, status IN ('sent', 'submitted'))  AS sent_at
        FROM ${events}
        WHERE message_id >= {lo:String} AND message_id < {hi:String}
        GROUP BY message_id
    ) AS e ON e.message_id = m.id
)`;
