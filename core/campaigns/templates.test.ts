import { describe, expect, it } from 'vitest';
import type { AccountStore, ApplicationRecord } from '../ports/account-store';
import type { CampaignStore, TemplateRecord } from '../ports/campaign-store';
import type { NumericIds } from '../messages/numeric-ids';
import { createTemplates } from './templates';

/** Templates over a store keeping one row per application and name, as the history table does. */
function templatesOf(rows: TemplateRecord[] = []) {
  const byKey = new Map(rows.map((t) => [`${t.applicationId}|${t.name}`, t]));
  const store = {
    upsertTemplate: async (t: TemplateRecord) => void byKey.set(`${t.applicationId}|${t.name}`, t),
    listTemplates: async (applicationId: string) => [...byKey.values()].filter((t) => t.applicationId === applicationId),
  } as unknown as CampaignStore;
  const applications = {
    getApplicationByName: async (name: string) => (name === 'acme' ? ({ id: 'app-acme', name: 'acme' } as ApplicationRecord) : undefined),
  } as unknown as AccountStore;
  let id = 100;
  const numericIds = Object.assign(() => id++, { reserve: () => 0, skipPast: () => undefined }) as NumericIds;
  return { templates: createTemplates({ store, applications, numericIds }), store };
}

const composed = 'Tūhoe hui'; // ū as one code point (NFC)
const decomposed = composed.normalize('NFD'); // u and a combining macron, as some keyboards type it

describe('campaign templates', () => {
  it('takes a name typed with a combining macron as the same template as one typed precomposed', async () => {
    const { templates, store } = templatesOf();
    const first = await templates.upsert('acme', composed, 'Kia ora {{param1}} 👋🏽');
    const again = await templates.upsert('acme', decomposed, 'Tēnā koe {{param1}} 🙏🏽');
    expect(again.id).toBe(first.id);
    expect((await store.listTemplates('app-acme')).map((t) => [t.name, t.content])).toEqual([[composed, 'Tēnā koe {{param1}} 🙏🏽']]);
    expect(await templates.contentFor('app-acme', decomposed)).toBe('Tēnā koe {{param1}} 🙏🏽');
    expect(await templates.contentFor('app-acme', composed)).toBe('Tēnā koe {{param1}} 🙏🏽');
  });

  it('finds and changes a template kept under a decomposed name before names were normalized, without a second one', async () => {
    const { templates, store } = templatesOf([{ id: 7, applicationId: 'app-acme', name: decomposed, content: 'Kia ora', updatedAt: 1 }]);
    expect(await templates.contentFor('app-acme', composed)).toBe('Kia ora');
    const changed = await templates.upsert('acme', composed, 'Kia ora anō');
    expect(changed.id).toBe(7);
    expect((await store.listTemplates('app-acme')).map((t) => [t.id, t.content])).toEqual([[7, 'Kia ora anō']]);
  });

  it('keeps each of two look-alike templates kept before names were normalized reachable by the name as it was typed', async () => {
    const { templates } = templatesOf([
      { id: 7, applicationId: 'app-acme', name: decomposed, content: 'Kia ora (decomposed)', updatedAt: 1 },
      { id: 8, applicationId: 'app-acme', name: composed, content: 'Kia ora (composed)', updatedAt: 2 },
    ]);
    expect(await templates.contentFor('app-acme', decomposed)).toBe('Kia ora (decomposed)');
    expect(await templates.contentFor('app-acme', composed)).toBe('Kia ora (composed)');
    expect((await templates.upsert('acme', composed, 'Kia ora anō')).id).toBe(8);
  });
});
