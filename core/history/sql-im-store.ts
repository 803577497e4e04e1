import type { ContactRecord, ImStore, ImTemplateRecord } from '../ports/im-store';
import { GET_CONTACT, GET_IM_TEMPLATE, IM_INSERTS, LIST_CONTACTS, LIST_IM_TEMPLATES, LIST_OPEN_IM_MESSAGES } from './im-queries';
import { dateTime64, jsonEachRow, toNumber, toStoredMessage } from './rows';
import type { SqlIo } from './sql-campaign-store';

const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));

const toTemplate = (r: Record<string, unknown>): ImTemplateRecord => ({
  applicationId: str(r.applicationId),
  id: str(r.id),
  name: str(r.name),
  language: str(r.language),
  body: str(r.body),
  updatedAt: toNumber(r.updatedAt),
});
const toContact = (r: Record<string, unknown>): ContactRecord => ({
  applicationId: str(r.applicationId),
  contactId: str(r.contactId),
  mobile: str(r.mobile),
  email: str(r.email),
  whatsappId: str(r.whatsappId),
  updatedAt: toNumber(r.updatedAt),
});

/** Intelligent Messaging templates, contacts and open messages on a ClickHouse engine. */
export function createSqlImStore(io: SqlIo): ImStore {
  return {
    async upsertTemplate(t) {
      await io.insert(
        IM_INSERTS.templates,
        jsonEachRow([t], (x) => ({
          application_id: x.applicationId,
          id: x.id,
          name: x.name,
          language: x.language,
          body: x.body,
          updated_at: dateTime64(x.updatedAt),
        })),
      );
    },
    async getTemplate(applicationId, id) {
      const rows = await io.select('getImTemplate', GET_IM_TEMPLATE, { applicationId, id });
      return rows.length > 0 ? toTemplate(rows[0]!) : undefined;
    },
    async listTemplates(applicationId) {
      return (await io.select('listImTemplates', LIST_IM_TEMPLATES, { applicationId })).map(toTemplate);
    },
    async upsertContact(c) {
      await io.insert(
        IM_INSERTS.contacts,
        jsonEachRow([c], (x) => ({
          application_id: x.applicationId,
          contact_id: x.contactId,
          mobile: x.mobile,
          email: x.email,
          whatsapp_id: x.whatsappId,
          updated_at: dateTime64(x.updatedAt),
        })),
      );
    },
    async getContact(applicationId, contactId) {
      const rows = await io.select('getContact', GET_CONTACT, { applicationId, contactId });
      return rows.length > 0 ? toContact(rows[0]!) : undefined;
    },
    async listContacts(applicationId) {
      return (await io.select('listContacts', LIST_CONTACTS, { applicationId })).map(toContact);
    },
    async listOpenMessages(since) {
      return (await io.select('listOpenImMessages', LIST_OPEN_IM_MESSAGES, { since: Math.trunc(since) })).map(toStoredMessage);
    },
  };
}
