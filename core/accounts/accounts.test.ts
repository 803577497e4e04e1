import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { accountsInMemory } from './accounts-test-kit';
import { hashPassword } from './secrets';

const refusal = (promise: Promise<unknown>): Promise<HermodError> =>
  promise.then(
    () => expect.fail('the application was created'),
    (err: unknown) => err as HermodError,
  );

describe('application names', () => {
  it('refuses a name that begins or ends with a space or an invisible character, which no listing shows', async () => {
    const { accounts, apps } = accountsInMemory();
    await accounts.upsert({ name: 'acme', password: 'kupuhipa' });
    for (const name of ['acme ', ' acme', 'acme\u00a0', 'acme\u3000', 'acme\u200b', '\u2060Kōrero']) {
      const err = await refusal(accounts.upsert({ name, password: 'kupuhipa-🔑' }));
      expect(err.code).toBe('invalid_attrib');
      expect(err.message).toMatch(/begins or ends with a space or an invisible character/);
    }
    // Inside a name, spaces and joiners are part of it; a name may end with an emoji and its variation selector.
    for (const name of ['Ngā Kōrero 👋🏽', '👨‍👩‍👧 whānau', 'aroha ❤️']) expect((await accounts.upsert({ name, password: 'x' })).name).toBe(name);
    expect([...apps.keys()]).toEqual(['acme', 'Ngā Kōrero 👋🏽', '👨‍👩‍👧 whānau', 'aroha ❤️']);
  });

  it('refuses a new name that differs from an existing application’s only in case or width, and says which it is taken for', async () => {
    const { accounts, apps } = accountsInMemory();
    await accounts.upsert({ name: 'Kōrero', password: 'kupuhipa' });
    // Invisible characters inside (a zero-width space, a word joiner, a soft hyphen, a BOM) are not read either.
    for (const name of ['kōrero', 'KŌRERO', 'Ｋōrero', 'KO\u0304RERO', 'Kō\u200brero', 'Kōre\u2060ro', 'Kō\u00adrero', 'Kōr\ufeffero']) {
      const err = await refusal(accounts.upsert({ name, password: 'kī-hou' }));
      expect(err.code).toBe('conflict');
      expect(err.message).toContain('an application named "Kōrero" exists');
    }
    // The application itself is changed by its name in either Unicode form, as before.
    expect((await accounts.upsert({ name: 'Ko\u0304rero', password: 'kī-hou' })).name).toBe('Kōrero');
    expect([...apps.keys()]).toEqual(['Kōrero']);
  });

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

describe('a password checked again by the tag of the stored one', () => {
  it('is known while the password stays, by either form of the name, and unknown once it changed, for a wrong tag or another name', async () => {
    const { accounts } = accountsInMemory();
    await accounts.upsert({ name: 'kāinga-ā-iwi', password: 'kupuhipa-🔐' });
    await accounts.upsert({ name: '商店', password: 'kupuhipa-🔐' });
    const checked = await accounts.authenticateBasic('kāinga-ā-iwi', 'kupuhipa-🔐');
    expect(checked?.passwordTag).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const tag = checked!.passwordTag;
    expect(await accounts.recheckBasic('kāinga-ā-iwi', tag)).toMatchObject({ id: checked!.id, passwordTag: tag });
    expect(await accounts.recheckBasic('kāinga-ā-iwi'.normalize('NFD'), tag)).toMatchObject({ id: checked!.id });
    expect(await accounts.recheckBasic('商店', tag)).toBeUndefined();
    expect(await accounts.recheckBasic('kāinga-ā-iwi', `${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined();
    expect(await accounts.recheckBasic('kāinga-ā-iwi', '')).toBeUndefined();
    await accounts.upsert({ name: 'kāinga-ā-iwi', password: 'kupu-hou' });
    expect(await accounts.recheckBasic('kāinga-ā-iwi', tag)).toBeUndefined();
    expect((await accounts.authenticateBasic('kāinga-ā-iwi', 'kupu-hou'))?.passwordTag).not.toBe(tag);
  });
});

describe('names and passwords typed on different keyboards', () => {
  // "Kōrero" typed on a Mac may come as o + U+0304 (NFD), on Windows as ō (NFC): the same text (RFC 8265 compares NFC).
  const nfc = 'Kōrero Māori'.normalize('NFC');
  const nfd = nfc.normalize('NFD');

  it('signs in an application whose name or password was typed with combining marks, and as precomposed letters', async () => {
    const { accounts } = accountsInMemory();
    await accounts.upsert({ name: nfd, password: 'kupuhipa-ā-iwi'.normalize('NFD') });
    for (const name of [nfc, nfd])
      for (const password of ['kupuhipa-ā-iwi'.normalize('NFC'), 'kupuhipa-ā-iwi'.normalize('NFD')])
        expect(await accounts.authenticateBasic(name, password)).toMatchObject({ name: nfc });
    expect(await accounts.authenticateBasic(nfc, 'kupuhipa-a-iwi')).toBeUndefined();
  });

  it('refuses a name longer than 255 characters once its letters are written as kept, not only as typed', async () => {
    const { accounts, apps } = accountsInMemory();
    // क़ (U+0958) is one character as typed and two (क + ़) in NFC.
    const name = '\u0958'.repeat(200);
    const err = await refusal(accounts.upsert({ name, password: 'kupuhipa' }));
    expect(err.code).toBe('invalid_attrib');
    expect(apps.size).toBe(0);
  });

  it('keeps one application for a name given in either form, not two', async () => {
    const { accounts, apps } = accountsInMemory();
    const first = await accounts.upsert({ name: nfc, password: 'tuatahi' });
    const again = await accounts.upsert({ name: nfd, password: 'tuarua' });
    expect(again.id).toBe(first.id);
    expect(apps.size).toBe(1);
    expect(await accounts.authenticateBasic(nfc, 'tuarua')).toMatchObject({ id: first.id });
  });

  it('still signs in an application whose name and password were stored as typed before they were compared in one form', async () => {
    const { accounts, apps } = accountsInMemory();
    const made = await accounts.upsert({ name: 'placeholder', password: 'x' });
    const record = apps.get('placeholder')!;
    apps.delete('placeholder');
    // As an earlier version stored them: the name as given (combining marks) and the hash of the password as given.
    apps.set(nfd, { ...record, name: nfd, passwordHash: await hashPassword('kupuhipa-ā'.normalize('NFD')) });
    expect(await accounts.authenticateBasic(nfd, 'kupuhipa-ā'.normalize('NFD'))).toMatchObject({ id: made.id });
    expect(await accounts.authenticateBasic(nfc, 'kupuhipa-ā'.normalize('NFC'))).toMatchObject({ id: made.id });
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
  /**
   * The middle of seven timings of each refusal, in milliseconds. Taken in turns (one of each, seven times over),
   * so a busy machine slows all of them alike instead of whichever was being timed when the load came.
   */
  const medianMsInTurns = async (...refusals: Array<() => Promise<unknown>>): Promise<number[]> => {
    const times: number[][] = refusals.map(() => []);
    for (let round = 0; round < 7; round++) {
      for (const [i, refuse] of refusals.entries()) {
        const started = performance.now();
        expect(await refuse()).toBeUndefined();
        times[i]!.push(performance.now() - started);
      }
    }
    return times.map((t) => t.sort((a, b) => a - b)[3]!);
  };

  it('take as long for a name no application has as for a wrong password, so timing tells no names', async () => {
    const { accounts } = accountsInMemory();
    await accounts.upsert({ name: 'kāinga-ā-iwi', password: 'pā💥' });
    await accounts.upsert({ name: 'kī-anake', apiKey: 'hmd_kī-🔑' });
    const [wrongPassword, unknownName, noPassword] = await medianMsInTurns(
      () => accounts.authenticateBasic('kāinga-ā-iwi', 'pā💥-not'),
      () => accounts.authenticateBasic('kāinga-ā-iwi-kore', 'pā💥'),
      () => accounts.authenticateBasic('kī-anake', 'pā💥'),
    );
    expect(unknownName).toBeGreaterThan(wrongPassword * 0.5);
    expect(noPassword).toBeGreaterThan(wrongPassword * 0.5);
  });
});

describe("rotating an application's callback secret", () => {
  it('keeps the secret replaced signing until the overlap ends, keeps it through other changes, and drops it at a rotation without one', async () => {
    const { accounts, apps } = accountsInMemory();
    await accounts.upsert({ name: 'acme', password: 'kupuhipa' });
    const first = apps.get('acme')!.callbackSecret;
    const before = Date.now();
    await accounts.upsert({ name: 'acme', callbackSecret: 'hmd_second', previousSecretValidMs: 3_600_000 });
    expect(apps.get('acme')).toMatchObject({ callbackSecret: 'hmd_second', previousCallbackSecret: first });
    expect(apps.get('acme')!.previousCallbackSecretUntil - before).toBeGreaterThanOrEqual(3_600_000);
    expect(apps.get('acme')!.previousCallbackSecretUntil - Date.now()).toBeLessThanOrEqual(3_600_000);
    // A change of something else (a callback URL) leaves the overlap as it was.
    const until = apps.get('acme')!.previousCallbackSecretUntil;
    await accounts.upsert({ name: 'acme', statusCallbackUrl: 'https://hooks.example.co.nz/tūnga' });
    expect(apps.get('acme')).toMatchObject({ callbackSecret: 'hmd_second', previousCallbackSecret: first, previousCallbackSecretUntil: until });
    // The overlap that ran is cut short, and the caller told which secret it kept.
    expect(await accounts.upsert({ name: 'acme', callbackSecret: 'hmd_third' })).toMatchObject({ endedOverlap: { secret: first, until } });
    expect(apps.get('acme')).toMatchObject({ callbackSecret: 'hmd_third', previousCallbackSecret: '', previousCallbackSecretUntil: 0 });
    expect((await accounts.upsert({ name: 'acme', callbackSecret: 'hmd_fourth' })).endedOverlap).toBeUndefined();
  });
});
