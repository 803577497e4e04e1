import { describe, expect, it } from 'vitest';
import { createAccounts } from '../accounts/accounts';
import type { AccountStore, ApplicationRecord } from '../ports/account-store';
import { createRecentMessages } from '../messages/recent-messages';
import type { StatusChange } from '../messages/status-recorder';
import type { MessageRecord } from '../ports/message-history';
import { createCallbackInterest } from './callback-interest';

/** The account port kept in a Map: what createAccounts reads and writes, nothing else. */
function accountsInMemory() {
  const apps = new Map<string, ApplicationRecord>();
  let reads = 0;
  const store: AccountStore = {
    upsertApplication: async (app) => void apps.set(app.name, app),
    getApplicationByName: async (name) => apps.get(name),
    getApplicationByApiKeyHash: async (hash) => [...apps.values()].find((a) => a.apiKeyHash === hash),
    listApplications: async () => {
      reads += 1;
      return [...apps.values()];
    },
  };
  const accounts = createAccounts({ applications: store, optOuts: { recordOptOuts: async () => undefined, listOptOuts: async () => [] } });
  return { accounts, reads: () => reads };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

const change = (applicationId: string, channel = 'sms'): StatusChange => ({ messageId: 'm-1', applicationId, channel, status: 'accepted', at: Date.now() });

describe('callback interest', () => {
  it('makes the job while the settings are not cached, and skips later changes of an application with no status receiver', async () => {
    const { accounts, reads } = accountsInMemory();
    const app = await accounts.upsert({ name: 'Ngā Kōrero 👋🏽', password: 'tēnā koe' });
    const madeWith = reads(); // creating an application reads the others' names
    const wants = createCallbackInterest(accounts, createRecentMessages());
    expect(wants(change(app.id))).toBe(true);
    await settle();
    expect(wants(change(app.id))).toBe(false);
    expect(wants(change(app.id))).toBe(false);
    expect(reads() - madeWith).toBe(1);
  });

  it('wants the callbacks of an application with a status receiver, and an IM message only with an IM receiver', async () => {
    const { accounts } = accountsInMemory();
    const app = await accounts.upsert({ name: '短信 app', password: 'secret', statusCallbackUrl: 'https://hooks.example.nz/kia-ora' });
    const wants = createCallbackInterest(accounts, createRecentMessages());
    wants(change(app.id));
    await settle();
    expect(wants(change(app.id))).toBe(true);
    expect(wants(change(app.id, 'im'))).toBe(false);
  });

  it('passes on a receipt (a change naming no application) of a message it does not know, however often', async () => {
    const { accounts } = accountsInMemory();
    const wants = createCallbackInterest(accounts, createRecentMessages());
    expect(wants(change(''))).toBe(true);
    await settle();
    expect(wants(change(''))).toBe(true);
  });

  it("judges a receipt by its message's application", async () => {
    const { accounts } = accountsInMemory();
    const quiet = await accounts.upsert({ name: 'quiet', password: 'secret' });
    const heard = await accounts.upsert({ name: 'heard', password: 'secret', statusCallbackUrl: 'https://hooks.example.jp/状態' });
    const recent = createRecentMessages();
    const message = (id: string, applicationId: string) => ({ id, applicationId, channel: 'sms', direction: 'MT' }) as MessageRecord;
    recent.put([message('m-quiet', quiet.id), message('m-heard', heard.id)]);
    const wants = createCallbackInterest(accounts, recent);
    const receipt = (messageId: string): StatusChange => ({ ...change(''), messageId, status: 'received' });
    wants(receipt('m-quiet'));
    wants(receipt('m-heard'));
    await settle();
    expect(wants(receipt('m-quiet'))).toBe(false);
    expect(wants(receipt('m-heard'))).toBe(true);
  });

  it('sees a receiver configured after the settings were cached at the next change', async () => {
    const { accounts } = accountsInMemory();
    const app = await accounts.upsert({ name: 'Aotearoa', password: 'secret' });
    const wants = createCallbackInterest(accounts, createRecentMessages());
    wants(change(app.id));
    await settle();
    expect(wants(change(app.id))).toBe(false);
    await accounts.upsert({ name: 'Aotearoa', statusCallbackUrl: 'https://receiver.example.com/status' });
    expect(wants(change(app.id))).toBe(true);
    await settle();
    expect(wants(change(app.id))).toBe(true);
  });
});
