import { describe, expect, it, vi } from 'vitest';
import type { CampaignsClient } from '../campaigns-client';
import type { Member } from '../../proto/gen/hermod/v1/campaigns';
import { HermodError } from '../../lib/errors';
import { createValidator } from '../http/validator';
import { CAMPAIGN_MANAGER_SCHEMAS } from './schemas';
import { importBody } from './import-body';
import { meantField } from '../http/near-miss-fields';

// Passed through, and counted: what a slip is looked for in.
vi.mock('../http/near-miss-fields', async (original) => {
  const actual = await original<typeof import('../http/near-miss-fields')>();
  return { ...actual, meantField: vi.fn(actual.meantField) };
});

async function* chunks(body: string): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(body);
  for (let i = 0; i < bytes.length; i += 16 * 1024) yield bytes.subarray(i, i + 16 * 1024);
}

/** Imports a list body against a core that takes everything; returns the fields the commit was built from and the members. */
async function importList(body: string) {
  const members: Member[] = [];
  const campaigns = {
    startImport: () => ({
      write: async (batch: Member[]) => void members.push(...batch),
      commit: async () => ({ id: 1, replayed: false }),
      abort: () => undefined,
    }),
  } as unknown as CampaignsClient;
  let committed: Record<string, unknown> | undefined;
  await importBody(chunks(body), { campaigns, validate: createValidator(CAMPAIGN_MANAGER_SCHEMAS), maxBytes: 256 * 1024 * 1024 }, 'app-1', 'list', (fields) => {
    committed = fields;
    return {} as never;
  });
  return { committed: committed!, members };
}

const MEMBER = { destination: '+64211234567', param1: 'Ngā mihi 👋🏽' };

describe('importBody', () => {
  it('keeps only the fields a list has and lets the others go, however many come (security trial: 250 MB of them filled the heap)', async () => {
    const unknown = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, 'ā'.repeat(20_000)]));
    const { committed, members } = await importList(JSON.stringify({ name: 'Wellington', ...unknown, members: [MEMBER], strict_validation: true }));
    expect(Object.keys(committed).sort()).toEqual(['name', 'strict_validation']);
    expect(committed.name).toBe('Wellington');
    expect(members).toEqual([{ destination: MEMBER.destination, params: ['Ngā mihi 👋🏽', '', '', '', '', ''] }]);
  });

  it('takes a "__proto__" field as an unknown field, never as where missing fields are read from (security trial)', async () => {
    const err = await importList(`{"__proto__":{"name":"x"},"members":[${JSON.stringify(MEMBER)}]}`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HermodError);
    expect((err as HermodError).message).toMatch(/name/);
    const { committed } = await importList(`{"name":"Ōtautahi","__proto__":{"strict_validation":false},"members":[${JSON.stringify(MEMBER)}]}`);
    expect(Object.getPrototypeOf(committed)).toBe(Object.prototype);
    expect(committed.strict_validation).toBeUndefined();
  });
  it('still refuses a misspelt field among many unknown ones, naming the field meant', async () => {
    const unknown = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`x${i}`, i]));
    const err = await importList(JSON.stringify({ name: 'Kirikiriroa', ...unknown, strict_validaton: false, members: [MEMBER] })).catch((e: unknown) => e);
    expect((err as HermodError).message).toBe('strict_validaton: is not a known field; did you mean strict_validation?');
  });
  it('does not look into field names far longer than any field’s for a slip, so a thousand 64 KiB names are let go (review)', async () => {
    const names = Array.from({ length: 50 }, (_, i) => [`strict_validation${'x'.repeat(60_000)}${i}`, 1]);
    vi.mocked(meantField).mockClear();
    const { committed } = await importList(JSON.stringify({ name: 'Rotorua', ...Object.fromEntries(names), members: [MEMBER] }));
    expect(Object.keys(committed)).toEqual(['name']);
    expect(vi.mocked(meantField).mock.calls.filter(([name]) => name.length > 1000)).toEqual([]);
  });
  it('names a slip of members too, beside members or instead of it (re-trial: memebrs ignored)', async () => {
    for (const body of [
      { name: 'Tauranga', memebrs: [MEMBER], members: [MEMBER] },
      { name: 'Tauranga', membres: [MEMBER] },
    ]) {
      const err = await importList(JSON.stringify(body)).catch((e: unknown) => e);
      expect((err as HermodError).message).toMatch(/(memebrs|membres): is not a known field; did you mean members\?/);
    }
  });
});
