import type { StoredMessage } from './message-history';

/**
 * Intelligent Messaging's part of history: the templates and contacts that
 * operators manage, and the messages whose delivery attempts are not settled
 * (for picking them up after a restart).
 */
export interface ImTemplateRecord {
  applicationId: string;
  /** A UUID: what requests name in `template_id`. */
  id: string;
  /** The name and language the carrier knows the template by (WhatsApp). */
  name: string;
  language: string;
  /** Text with {{parameter}} placeholders, for channels that send plain text. */
  body: string;
  updatedAt: number;
}

export interface ContactRecord {
  applicationId: string;
  contactId: string;
  mobile: string;
  email: string;
  whatsappId: string;
  updatedAt: number;
}

export interface ImStore {
  upsertTemplate(t: ImTemplateRecord): Promise<void>;
  getTemplate(applicationId: string, id: string): Promise<ImTemplateRecord | undefined>;
  listTemplates(applicationId: string): Promise<ImTemplateRecord[]>;
  upsertContact(c: ContactRecord): Promise<void>;
  getContact(applicationId: string, contactId: string): Promise<ContactRecord | undefined>;
  listContacts(applicationId: string): Promise<ContactRecord[]>;
  /** IM messages accepted since `since` whose outcome is not recorded yet. */
  listOpenMessages(since: number): Promise<StoredMessage[]>;
}

/** Event detail that marks an IM message's outcome as settled. */
export const IM_SETTLED = 'im:settled';
