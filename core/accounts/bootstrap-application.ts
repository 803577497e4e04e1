import type { Logger } from '../../lib/log';
import { sameTypedText } from '../../lib/typed-text';
import type { Accounts } from './accounts';

export interface BootstrapApplication {
  app: string;
  password?: string;
  apiKey?: string;
}

/**
 * HERMOD_BOOTSTRAP_*: the application is made at start if it does not exist.
 * An existing one keeps the password and API key it has (as Grafana's admin
 * password is set on the first start only): a password an operator changed
 * with `apps set-password` after a leak must not come back with the next
 * restart of core. A credential it has none of is set.
 */
export async function ensureBootstrapApplication(accounts: Accounts, wanted: BootstrapApplication, log: Logger): Promise<void> {
  const existing = (await accounts.list()).find((a) => sameTypedText(a.name, wanted.app));
  if (!existing) {
    const app = await accounts.upsert({ name: wanted.app, password: wanted.password, apiKey: wanted.apiKey });
    log.info('bootstrap application ready', { application: app.name, created: true });
    return;
  }
  const password = wanted.password && !existing.hasPassword ? wanted.password : undefined;
  const apiKey = wanted.apiKey && !existing.hasApiKey ? wanted.apiKey : undefined;
  if (password || apiKey) await accounts.upsert({ name: existing.name, password, apiKey });
  const kept = [wanted.password && existing.hasPassword ? 'password' : '', wanted.apiKey && existing.hasApiKey ? 'API key' : ''].filter(Boolean);
  log.info('bootstrap application ready', {
    application: existing.name,
    ...(password || apiKey ? { set: [password ? 'password' : '', apiKey ? 'API key' : ''].filter(Boolean) } : {}),
    ...(kept.length > 0
      ? { kept, note: 'an existing application keeps its credentials; change them with `hermod apps set-password` or `hermod keys issue`' }
      : {}),
  });
}
