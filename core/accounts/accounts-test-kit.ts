import type { AccountStore, ApplicationRecord } from '../ports/account-store';
import { createAccounts } from './accounts';

/** Accounts on their port kept in a Map (by name): what createAccounts reads and writes, nothing else. For tests and benches. */
export function accountsInMemory() {
  const apps = new Map<string, ApplicationRecord>();
  const store: AccountStore = {
    upsertApplication: async (app) => void apps.set(app.name, app),
    getApplicationByName: async (name) => apps.get(name),
    getApplicationByApiKeyHash: async (hash) => [...apps.values()].find((a) => a.apiKeyHash === hash),
    listApplications: async () => [...apps.values()],
  };
  const accounts = createAccounts({ applications: store, optOuts: { recordOptOuts: async () => undefined, listOptOuts: async () => [] } });
  return { accounts, apps };
}
