import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { accountsInMemory } from './accounts-test-kit';

const refusal = (promise: Promise<unknown>): Promise<HermodError> =>
  promise.then(
    () => expect.fail('the application was created'),
    (err: unknown) => err as HermodError,
  );

describe('application names', () => {
  it('refuses to create an application whose name has a colon: HTTP Basic ends the user name at the first one', async () => {
    const { accounts, apps } = accountsInMemory();
    for (const name of ['co:lon', 'kāinga:ā-iwi', '商店:', ':']) {
      const err = await refusal(accounts.upsert({ name, password: 'kupuhipa-🔑' }));
      expect(err).toBeInstanceOf(HermodError);
      expect(err.code).toBe('invalid_attrib');
      expect(err.message).toContain(JSON.stringify(name));
      expect(err.message).toMatch(/colon/);
      expect(err.fields.map((f) => f.field)).toEqual(['name']);
    }
    expect(apps.size).toBe(0);
  });

  it('refuses to create an application whose name has a control character', async () => {
    const { accounts, apps } = accountsInMemory();
    for (const name of ['tēnā\tkoe', 'kia ora\n', '\u0000商店', 'del\u007f', 'c1\u0085']) {
      const err = await refusal(accounts.upsert({ name, password: 'kupuhipa' }));
      expect(err.code).toBe('invalid_attrib');
      expect(err.message).toMatch(/control character/);
    }
    expect(apps.size).toBe(0);
  });

  it('refuses an empty name', async () => {
    const { accounts } = accountsInMemory();
    expect((await refusal(accounts.upsert({ name: '', password: 'kupuhipa' }))).code).toBe('missing_attrib');
  });

  it('creates applications named in any script, with spaces, hyphens and emoji', async () => {
    const { accounts, apps } = accountsInMemory();
    const names = ['acme', 'kāinga-ā-iwi', '商店', 'Ngā Kōrero 👋🏽', '👨‍👩‍👧 whānau', 'ร้านค้า'];
    for (const name of names) expect((await accounts.upsert({ name, password: 'kupuhipa' })).name).toBe(name);
    expect([...apps.keys()]).toEqual(names);
    expect(await accounts.authenticateBasic('kāinga-ā-iwi', 'kupuhipa')).toMatchObject({ name: 'kāinga-ā-iwi' });
  });

  it('still changes an application stored with a colon in its name before names were checked', async () => {
    const { accounts, apps } = accountsInMemory();
    const old = await accounts.upsert({ name: 'old', password: 'kupuhipa' });
    apps.set('old:name', { ...apps.get('old')!, name: 'old:name' });
    apps.delete('old');
    const changed = await accounts.upsert({ name: 'old:name', apiKey: 'hmd_tēnā-koe' });
    expect(changed).toEqual({ id: old.id, name: 'old:name' });
    expect(await accounts.authenticateApiKey('hmd_tēnā-koe')).toEqual({ id: old.id, name: 'old:name' });
  });
});

describe('claimed addresses', () => {
  it('reads the claims once for the many sends that ask at the same moment, and again after a claim changes', async () => {
    const { accounts, apps } = accountsInMemory();
    await accounts.upsert({ name: 'kāinga', password: 'kupuhipa', sourceAddresses: ['+6421555000', 'Kainga'] });
    const kainga = apps.get('kāinga')!.id;
    // The store lists the applications from the map's values: count those reads.
    let reads = 0;
    const values = apps.values.bind(apps);
    apps.values = () => {
      reads += 1;
      return values();
    };
    const owners = await Promise.all(Array.from({ length: 100 }, () => accounts.ownerOfAddress('6421555000')));
    expect(new Set(owners)).toEqual(new Set([kainga]));
    expect(reads).toBe(1);

    await accounts.upsert({ name: 'kāinga', password: 'kupuhipa', sourceAddresses: ['4001'] });
    expect(await accounts.ownerOfAddress('4001')).toBe(kainga);
    expect(await accounts.ownerOfAddress('6421555000')).toBeUndefined();
  });

  it('refuses a claim on an address no send could use, naming it and how to write it, and keeps every claim it had', async () => {
    const { accounts } = accountsInMemory();
    const { id } = await accounts.upsert({ name: 'kāinga-ā-iwi', password: 'kupuhipa', sourceAddresses: ['4001'] });
    for (const bad of ['21-555', '+64 21-555 000', 'GLOBEXXXXXXXXXX', 'Kāinga', '', ' 4001']) {
      const err = await refusal(accounts.upsert({ name: 'kāinga-ā-iwi', sourceAddresses: ['+6421555000', bad] }));
      expect(err.code, bad).toBe('invalid_attrib');
      expect(err.message.slice(0, err.message.indexOf(' cannot be sent from: '))).toBe(`source address ${JSON.stringify(bad)}`);
      expect(err.fields.map((f) => f.field)).toEqual(['source_addresses']);
    }
    expect(await accounts.ownerOfAddress('4001')).toBe(id);
    expect(await accounts.ownerOfAddress('6421555000')).toBeUndefined();
  });
});

describe('refused passwords', () => {
  /** The middle of five timings of `refuse`, in milliseconds. */
  const medianMs = async (refuse: () => Promise<unknown>): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect(await refuse()).toBeUndefined();
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[2]!;
  };

  it('take as long for a name no application has as for a wrong password, so timing tells no names', async () => {
    const { accounts } = accountsInMemory();
    await accounts.upsert({ name: 'kāinga-ā-iwi', password: 'pā💥' });
    await accounts.upsert({ name: 'kī-anake', apiKey: 'hmd_kī-🔑' });
    const wrongPassword = await medianMs(() => accounts.authenticateBasic('kāinga-ā-iwi', 'pā💥-not'));
    const unknownName = await medianMs(() => accounts.authenticateBasic('kāinga-ā-iwi-kore', 'pā💥'));
    const noPassword = await medianMs(() => accounts.authenticateBasic('kī-anake', 'pā💥'));
    expect(unknownName).toBeGreaterThan(wrongPassword * 0.5);
    expect(noPassword).toBeGreaterThan(wrongPassword * 0.5);
  });
});
