import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import { accountsInMemory } from './accounts-test-kit';
import { ensureBootstrapApplication } from './bootstrap-application';

const log = createLogger({ test: 'bootstrap-application' });

describe('the bootstrap application of HERMOD_BOOTSTRAP_*', () => {
  it('is made with its password and API key at the first start', async () => {
    const { accounts } = accountsInMemory();
    await ensureBootstrapApplication(accounts, { app: 'Kōrero', password: 'muna-ā', apiKey: 'hmd_kī-🔑' }, log);
    expect(await accounts.authenticateBasic('Kōrero', 'muna-ā')).toMatchObject({ name: 'Kōrero' });
    expect(await accounts.authenticateApiKey('hmd_kī-🔑')).toMatchObject({ name: 'Kōrero' });
  });

  it('keeps the password and API key an operator changed since, at every later start, whichever form its name is typed in', async () => {
    const { accounts } = accountsInMemory();
    const boot = { app: 'Kōrero', password: 'muna-ā', apiKey: 'hmd_kī-🔑' };
    await ensureBootstrapApplication(accounts, boot, log);
    // Rotated after a leak.
    await accounts.upsert({ name: 'Kōrero', password: 'muna-hou-新', apiKey: 'hmd_kī-hou' });
    await ensureBootstrapApplication(accounts, boot, log);
    await ensureBootstrapApplication(accounts, { ...boot, app: 'Kōrero'.normalize('NFD') }, log);
    expect(await accounts.authenticateBasic('Kōrero', 'muna-ā')).toBeUndefined();
    expect(await accounts.authenticateApiKey('hmd_kī-🔑')).toBeUndefined();
    expect(await accounts.authenticateBasic('Kōrero', 'muna-hou-新')).toMatchObject({ name: 'Kōrero' });
    expect(await accounts.authenticateApiKey('hmd_kī-hou')).toMatchObject({ name: 'Kōrero' });
    expect((await accounts.list()).map((a) => a.name)).toEqual(['Kōrero']);
  });

  it('gives an existing application a credential it has none of', async () => {
    const { accounts } = accountsInMemory();
    await ensureBootstrapApplication(accounts, { app: 'acme', password: 'secret' }, log);
    await ensureBootstrapApplication(accounts, { app: 'acme', password: 'other', apiKey: 'dev-key-123' }, log);
    expect(await accounts.authenticateApiKey('dev-key-123')).toMatchObject({ name: 'acme' });
    expect(await accounts.authenticateBasic('acme', 'secret')).toMatchObject({ name: 'acme' });
    expect(await accounts.authenticateBasic('acme', 'other')).toBeUndefined();
  });
});
