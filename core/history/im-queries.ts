import { HISTORY_TABLES } from './schema';
import { MESSAGE_FIELDS } from './queries';

/** Intelligent Messaging reads; same conventions as queries.ts. */
const { imTemplates, contacts, messages, events } = HISTORY_TABLES;

export const IM_INSERTS = {
  templates: { table: imTemplates, columns: ['application_id', 'id', 'name', 'language', 'body', 'updated_at'] },
  contacts: { table: contacts, columns: ['application_id', 'contact_id', 'mobile', 'email', 'whatsapp_id', 'updated_at'] },
} as const;

const TEMPLATE_FIELDS = `application_id AS applicationId, id, name, language, body, toUnixTimestamp64Milli(updated_at) AS updatedAt`;
const CONTACT_FIELDS = `application_id AS applicationId, contact_id AS contactId, mobile, email, whatsapp_id AS whatsappId, toUnixTimestamp64Milli(updated_at) AS updatedAt`;

/** Params: applicationId String, id String. */
export const GET_IM_TEMPLATE = `SELECT ${TEMPLATE_FIELDS} FROM ${imTemplates} FINAL WHERE application_id = {applicationId:String} AND id = {id:String}`;
export const LIST_IM_TEMPLATES = `SELECT ${TEMPLATE_FIELDS} FROM ${imTemplates} FINAL WHERE application_id = {applicationId:String} ORDER BY name`;
/** Params: applicationId String, contactId String. */
export const GET_CONTACT = `SELECT ${CONTACT_FIELDS} FROM ${contacts} FINAL WHERE application_id = {applicationId:String} AND contact_id = {contactId:String}`;
export const LIST_CONTACTS = `SELECT ${CONTACT_FIELDS} FROM ${contacts} FINAL WHERE application_id = {applicationId:String} ORDER BY contact_id`;

/**
 * IM messages accepted since `since` (epoch ms) without a settled marker event,
 * with their latest status, each once: a message row written twice (a retried
 * insert, a journal replayed after a crash) is collapsed by LIMIT 1 BY, as in
 * LIST_UNFINISHED; two rows made core resume the message twice. Params: since Int64.
 */
export const LIST_OPEN_IM_MESSAGES = `
SELECT ${MESSAGE_FIELDS},
    s.last_status AS status,
    toUnixTimestamp64Milli(s.last_at) AS statusAt
FROM ${messages} AS m
LEFT JOIN
(
    SELECT message_id, argMax(status, (stage, at)) AS last_status, argMax(at, (stage, at)) AS last_at, countIf(detail = 'im:settled') AS settled
    FROM ${events}
    WHERE message_id IN (SELECT id FROM ${messages} WHERE channel = 'im' AND accepted_at >= fromUnixTimestamp64Milli({since:Int64}))
    GROUP BY message_id
) AS s ON s.message_id = m.id
WHERE m.channel = 'im' AND m.accepted_at >= fromUnixTimestamp64Milli({since:Int64}) AND s.settled = 0
ORDER BY m.accepted_at, m.id
LIMIT 1 BY m.id`;
