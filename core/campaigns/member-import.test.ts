import { describe, expect, it } from 'vitest';
import type { CampaignRecord, CampaignStore, KeyedImport, ListRecord, MemberRow } from '../ports/campaign-store';
import type { HotState } from '../ports/state';
import { createNumericIds } from '../messages/numeric-ids';
import { createMemberImporter, type ImportFields, type ImportPart } from './member-import';

/** The parts of a campaign store an import writes, in memory. */
function memoryStore() {
  const members = new Map<number, MemberRow[]>();
  const lists = new Map<number, ListRecord>();
  const campaigns = new Map<number, CampaignRecord>();
  const keyed = new Map<string, KeyedImport>();
  const store: Partial<CampaignStore> = {
    async insertMembers(owner, rows) {
      members.set(owner, [...(members.get(owner) ?? []), ...rows]);
    },
    async deleteMembers(owner) {
      members.delete(owner);
    },
    async upsertList(l) {
      lists.set(l.id, l);
    },
    async upsertCampaign(c) {
      campaigns.set(c.id, c);
    },
    async rememberKeyedImport(k) {
      keyed.set(`${k.applicationId}\n${k.dedupKey}`, k);
    },
    async findKeyedImport(applicationId, dedupKey) {
      const k = keyed.get(`${applicationId}\n${dedupKey}`);
      return k && (lists.has(k.id) || campaigns.has(k.id)) ? k : undefined;
    },
  };
  return { store: store as CampaignStore, members, lists, campaigns };
}

const fields = (overrides: Partial<ImportFields> = {}): ImportFields => ({
  name: 'Kiritaki — 客户 🌿',
  batch: '',
  email: '',
  removeOptOuts: true,
  utcOffsetMinutes: 780,
  content: 'Kia ora {{param1}}',
  template: '',
  mask: '',
  optOutResponse: '',
  replyResponse: '',
  errorMessages: '',
  ...overrides,
});

async function* parts(kind: 'list' | 'campaign', f: ImportFields, destinations: string[]): AsyncGenerator<ImportPart> {
  yield { part: 'begin', applicationId: 'acme', kind };
  yield { part: 'members', members: destinations.map((destination) => ({ destination, params: ['Tēnā koe'] })) };
  yield { part: 'commit', fields: f };
}

describe('member import with an Idempotency-Key', () => {
  const setUp = () => {
    const memory = memoryStore();
    const scheduled: CampaignRecord[] = [];
    const state = { areOptedOut: async (xs: readonly unknown[]) => xs.map(() => false) } as unknown as HotState;
    const importMembers = createMemberImporter({
      store: memory.store,
      state,
      numericIds: createNumericIds(1),
      templateContent: async () => undefined,
      onCampaign: (c) => scheduled.push(c),
    });
    return { ...memory, scheduled, importMembers };
  };

  it('answers a retry of a created list with the first answer, marked as a replay, and keeps none of the retry', async () => {
    const { importMembers, lists, members } = setUp();
    const handsets = ['+6421000001', '6421000001', '+6421000002'];
    const first = await importMembers(parts('list', fields({ dedupKey: 'kī.a' }), handsets));
    expect(first.errorMessages).toMatch(/1 duplicate member/);
    const retry = await importMembers(parts('list', fields({ dedupKey: 'kī.a' }), handsets));
    expect(first.replayed).toBeUndefined();
    expect(retry).toEqual({ ...first, replayed: true });
    expect([...lists.keys()]).toEqual([first.id]);
    expect([...members.keys()]).toEqual([first.id]);
  });

  it('creates a campaign once, and schedules it once, however often it is retried', async () => {
    const { importMembers, campaigns, scheduled } = setUp();
    const f = fields({ dedupKey: 'kī.c', scheduleAt: Date.now() + 86_400_000 });
    const first = await importMembers(parts('campaign', f, ['+6421000003']));
    const again = await importMembers(parts('campaign', f, ['+6421000003']));
    expect(again.id).toBe(first.id);
    expect([...campaigns.keys()]).toEqual([first.id]);
    expect(scheduled.map((c) => c.id)).toEqual([first.id]);
  });

  it('creates another list for another key, or without one', async () => {
    const { importMembers, lists } = setUp();
    const a = await importMembers(parts('list', fields({ dedupKey: 'kī.a' }), ['+6421000004']));
    const b = await importMembers(parts('list', fields({ dedupKey: 'kī.b' }), ['+6421000004']));
    const c = await importMembers(parts('list', fields(), ['+6421000004']));
    const d = await importMembers(parts('list', fields(), ['+6421000004']));
    expect(new Set([a.id, b.id, c.id, d.id]).size).toBe(4);
    expect(lists.size).toBe(4);
  });
});
