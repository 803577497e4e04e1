import { typedForms } from '../../lib/typed-text';
import type { AccountStore, ApplicationRecord } from '../ports/account-store';

/**
 * The application of a name as typed, in whichever form (lib/typed-text.ts)
 * it was stored. Every form is asked each time, side by side, so how long a
 * lookup takes tells nothing of which names exist.
 */
export async function applicationNamed(store: Pick<AccountStore, 'getApplicationByName'>, name: string): Promise<ApplicationRecord | undefined> {
  const found = await Promise.all(typedForms(name).map((form) => store.getApplicationByName(form)));
  return found.find((app) => app !== undefined);
}
