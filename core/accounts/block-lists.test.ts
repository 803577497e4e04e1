import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { createMemoryState } from '../adapters/memory-state';
import type { AccountStore, ApplicationRecord } from '../ports/account-store';
import type { BlockListStore, BlockRecord } from '../ports/block-list-store';
import { createBlockLists } from './block-lists';

/** The two history ports block lists use, kept in memory: an entry is in force while its latest record blocks. */
function historyInMemory(applications: Pick<ApplicationRecord, 'id' | 'name'>[]) {
  const latest = new Map<string, BlockRecord>();
  const store: BlockListStore = {
    recordBlocks: async (entries) => {
      for (const e of entries) latest.set(`${e.scope} ${e.prefix}`, e);
    },
    listBlocks: async (scope) => [...latest.values()].filter((e) => e.blocked && (scope === undefined || e.scope === scope)),
  };
  const apps = applications as ApplicationRecord[];
  const accounts: AccountStore = {
    upsertApplication: async () => undefined,
    getApplicationByName: async (name) => apps.find((a) => a.name === name),
    getApplicationByApiKeyHash: async () => undefined,
    listApplications: async () => apps,
  };
  return { store, accounts };
}

function blockListsOf(applications: Pick<ApplicationRecord, 'id' | 'name'>[]) {
  const { store, accounts } = historyInMemory(applications);
  const state = createMemoryState();
  return { lists: createBlockLists({ store, applications: accounts, state }), state };
}

const refusal = (promise: Promise<unknown>): Promise<HermodError> =>
  promise.then(
    () => expect.fail('the removal was accepted'),
    (err: unknown) => err as HermodError,
  );

describe('block lists', () => {
  const kainga = { id: 'app-kāinga', name: 'kāinga-ā-iwi' };
  const shop = { id: 'app-商店', name: '商店' };

  it('removes an entry written another way: spaces, dashes and the 00 prefix are read as the entry was', async () => {
    const { lists, state } = blockListsOf([kainga]);
    await lists.update('kāinga-ā-iwi', ['+6421999'], true);
    const removed = await lists.update('kāinga-ā-iwi', ['0064 21-999'], false);
    expect(removed.map((e) => e.prefix)).toEqual(['+6421999']);
    expect(await lists.list('kāinga-ā-iwi')).toEqual([]);
    expect(await state.findBlocks([{ applicationId: kainga.id, destination: '+64219990001' }])).toEqual([undefined]);
  });

  it('refuses to add an entry written with a plus and a 0, as no country code starts with 0, and adds none of the others with it', async () => {
    const { lists } = blockListsOf([kainga]);
    const err = await refusal(lists.update('kāinga-ā-iwi', ['+64', '+000', '+905'], true));
    expect(err.code).toBe('invalid_attrib');
    expect(err.message).toMatch(/"\+000".*country code/);
    expect(await lists.list('kāinga-ā-iwi')).toEqual([]);
  });

  it('refuses to add a national number, or the pieces of a number an unquoted shell line split, and adds none of the others with it (operator trial)', async () => {
    const { lists } = blockListsOf([kainga]);
    // `hermod blocklist add 021 555 1234` and `hermod blocklist add +64 21 555`: not +021…, nor all of New Zealand.
    for (const entries of [['021', '555', '1234'], ['+64', '21', '555'], ['6421555'], ['(021) 555 1234'], ['+64', '(212) 555-1234'], ['-21']]) {
      const err = await refusal(lists.update('kāinga-ā-iwi', entries, true));
      expect(err.code, entries.join(' ')).toBe('invalid_attrib');
      expect(err.message).toMatch(
        /^"(021|21|6421555|\(021\) 555 1234|\(212\) 555-1234|-21)" is not in international form: write it with \+ and its country code/,
      );
      expect(await lists.list('kāinga-ā-iwi')).toEqual([]);
    }
    // 00 and then a 0: a country code starting with 0, as +0… is (review).
    expect((await refusal(lists.update('kāinga-ā-iwi', ['000123'], true))).message).toMatch(/no country code starts with 0/);
    // With its plus, or the 00 international prefix, as before.
    expect((await lists.update('kāinga-ā-iwi', ['+64 21 555', '0061 4'], true)).map((e) => e.prefix)).toEqual(['+6421555', '+614']);
  });

  it('refuses to remove an entry that is not on that list, as not found, naming the entry and the list', async () => {
    const { lists } = blockListsOf([kainga, shop]);
    await lists.update('商店', ['+6421999'], true);
    await lists.update('', ['+64'], true);

    const notOnApp = await refusal(lists.update('kāinga-ā-iwi', ['+6421999'], false));
    expect(notOnApp).toBeInstanceOf(HermodError);
    expect(notOnApp.code).toBe('not_found');
    expect(notOnApp.message).toBe('+6421999 is not on the block list of kāinga-ā-iwi');

    // A prefix of an entry, or a number an entry covers, is not that entry.
    const notGlobal = await refusal(lists.update('', ['+6421999', '+6'], false));
    expect(notGlobal.message).toBe('+6421999 and +6 are not on the global block list');
    expect((await lists.list('')).map((e) => [e.applicationName, e.prefix])).toEqual([
      ['商店', '+6421999'],
      ['', '+64'],
    ]);
  });

  it('removes nothing when one of the entries is not on the list', async () => {
    const { lists, state } = blockListsOf([kainga]);
    await lists.update('kāinga-ā-iwi', ['+8190', '+86139'], true);
    const err = await refusal(lists.update('kāinga-ā-iwi', ['+8190', '+44'], false));
    expect(err.message).toBe('+44 is not on the block list of kāinga-ā-iwi; nothing was removed');
    expect((await lists.list('kāinga-ā-iwi')).map((e) => e.prefix).sort()).toEqual(['+8190', '+86139']);
    expect(await state.findBlocks([{ applicationId: kainga.id, destination: '+819012345678' }])).toEqual(['+8190']);
  });
});
