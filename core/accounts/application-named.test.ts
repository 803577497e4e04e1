import { describe, expect, it } from 'vitest';
import type { ApplicationRecord } from '../ports/account-store';
import { applicationNamed } from './application-named';

const stored = (name: string) => ({ id: `id-${name}`, name }) as ApplicationRecord;

/** A store holding applications by exact name, counting the lookups it answered. */
function storeOf(...names: string[]) {
  const apps = new Map(names.map((n) => [n, stored(n)]));
  let lookups = 0;
  return {
    getApplicationByName: async (name: string) => {
      lookups += 1;
      return apps.get(name);
    },
    lookups: () => lookups,
  };
}

describe('an application looked up by its name as typed', () => {
  const nfc = 'Ngā Kōrero'.normalize('NFC');
  const nfd = nfc.normalize('NFD');

  it('is found whichever form it was stored in and whichever it is asked in', async () => {
    expect(await applicationNamed(storeOf(nfc), nfd)).toMatchObject({ name: nfc });
    expect(await applicationNamed(storeOf(nfd), nfc)).toMatchObject({ name: nfd });
    expect(await applicationNamed(storeOf(nfc), 'Nga Korero')).toBeUndefined();
  });

  it('asks as many times for a name that exists as for one that does not, so timing tells no names', async () => {
    const known = storeOf(nfc);
    await applicationNamed(known, nfc);
    const unknown = storeOf('acme');
    await applicationNamed(unknown, nfc);
    expect(known.lookups()).toBe(unknown.lookups());
  });
});
