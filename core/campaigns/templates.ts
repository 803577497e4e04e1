import type { AccountStore } from '../ports/account-store';
import { applicationNamed } from '../accounts/application-named';
import type { CampaignStore, TemplateRecord } from '../ports/campaign-store';
import type { NumericIds } from '../messages/numeric-ids';
import { HermodError } from '../../lib/errors';
import { validateContent } from './message-template';
import { checkNameText } from '../domain/control-characters';

/**
 * Template names compare in NFC: `Tūhoe` typed with ū as one code point and as u with a combining macron (as some
 * keyboards type it) look alike and name one template.
 */
const named = (all: readonly TemplateRecord[], name: string): TemplateRecord | undefined =>
  // The one kept exactly so first: two look-alikes kept before names were normalized each stay reachable as typed.
  all.find((t) => t.name === name) ?? all.find((t) => t.name.normalize('NFC') === name.normalize('NFC'));

/**
 * Message templates of an application: operators create and change them (by
 * name, which is unique per application in NFC; the id stays when the content
 * changes), Campaign Manager lists them, and a campaign's `template` names one
 * by name (or, failing that, by its numeric id).
 */
export function createTemplates(deps: { store: CampaignStore; applications: AccountStore; numericIds: NumericIds; now?: () => number }) {
  const now = deps.now ?? Date.now;
  return {
    list: (applicationId: string): Promise<TemplateRecord[]> => deps.store.listTemplates(applicationId),

    async upsert(applicationName: string, name: string, content: string): Promise<TemplateRecord> {
      const app = await applicationNamed(deps.applications, applicationName);
      if (!app) throw new HermodError('not_found', `no application named ${applicationName}`);
      if (!name || name.length > 255) throw new HermodError('invalid_attrib', 'template name must be 1..255 characters');
      checkNameText(name, 'template name');
      if (!content) throw new HermodError('invalid_attrib', 'template content is required');
      validateContent(content);
      const current = named(await deps.store.listTemplates(app.id), name);
      const record: TemplateRecord = {
        id: current?.id ?? deps.numericIds(),
        applicationId: app.id,
        // One kept under another form (before names were normalized) keeps it: a second row would list the name twice.
        name: current?.name ?? name.normalize('NFC'),
        content,
        updatedAt: Math.max(now(), (current?.updatedAt ?? 0) + 1),
      };
      await deps.store.upsertTemplate(record);
      return record;
    },

    async contentFor(applicationId: string, template: string): Promise<string | undefined> {
      const all = await deps.store.listTemplates(applicationId);
      const found = named(all, template) ?? (/^\d+$/.test(template) ? all.find((t) => String(t.id) === template) : undefined);
      return found?.content;
    },
  };
}

export type Templates = ReturnType<typeof createTemplates>;
