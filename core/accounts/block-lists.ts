import { HermodError } from '../../lib/errors';
import { applicationNamed } from './application-named';
import { normalizeBlockPrefix } from '../domain/block-prefix';
import type { AccountStore } from '../ports/account-store';
import type { BlockListStore } from '../ports/block-list-store';
import type { HotState } from '../ports/state';

export interface BlockListEntryView {
  /** '' : the global list. */
  applicationName: string;
  prefix: string;
  at: number;
}

export interface BlockLists {
  /** Adds (blocked) or removes prefixes of one application's list, or of the global one (applicationName ''). */
  update(applicationName: string, prefixes: readonly string[], blocked: boolean): Promise<BlockListEntryView[]>;
  /** The entries of one application's list, or of every list (applicationName ''). */
  list(applicationName: string): Promise<BlockListEntryView[]>;
  /** Copies every entry in force into hot state (core start), or those of these scopes ('' the global list). */
  load(scopes?: readonly string[]): Promise<void>;
}

/**
 * Operators' block lists: history holds them durably, hot state holds the
 * copy every intake reads. A change is written to history first, then to hot
 * state, so a crash between the two is repaired by the next start's load.
 */
export function createBlockLists(deps: { store: BlockListStore; applications: AccountStore; state: HotState }): BlockLists {
  const scopeOf = async (applicationName: string): Promise<string> => {
    if (applicationName === '') return '';
    const app = await applicationNamed(deps.applications, applicationName);
    if (!app) throw new HermodError('not_found', `no application named ${applicationName}`);
    return app.id;
  };
  const view = async (entries: { scope: string; prefix: string; at: number }[]): Promise<BlockListEntryView[]> => {
    const names = new Map((await deps.applications.listApplications()).map((a) => [a.id, a.name]));
    return entries.map((e) => ({ applicationName: e.scope === '' ? '' : (names.get(e.scope) ?? e.scope), prefix: e.prefix, at: e.at }));
  };
  /** A removal names entries as they are listed (after normalizing): one that is not there is a typo, not a removal that did nothing. */
  const refuseAbsent = async (scope: string, applicationName: string, prefixes: readonly string[]): Promise<void> => {
    const listed = new Set((await deps.store.listBlocks(scope)).map((e) => e.prefix));
    const absent = [...new Set(prefixes.filter((p) => !listed.has(p)))];
    if (absent.length === 0) return;
    const list = applicationName === '' ? 'the global block list' : `the block list of ${applicationName}`;
    const which = absent.length === 1 ? `${absent[0]} is` : `${absent.slice(0, -1).join(', ')} and ${absent.at(-1)} are`;
    throw new HermodError('not_found', `${which} not on ${list}${new Set(prefixes).size > absent.length ? '; nothing was removed' : ''}`, {
      fields: [{ field: 'prefixes', description: `entries of ${list}, as hermod blocklist list shows them` }],
    });
  };
  return {
    async update(applicationName, prefixes, blocked) {
      if (prefixes.length === 0) throw new HermodError('missing_attrib', 'give at least one number or prefix');
      const normalized = prefixes.map((p) => {
        const refused = (why: string): HermodError =>
          new HermodError('invalid_attrib', `${JSON.stringify(p)} ${why}`, {
            fields: [{ field: 'prefixes', description: 'E.164 numbers or prefixes, e.g. +6421' }],
          });
        const compact = p.replace(/[\s().-]/g, '');
        // Written with its plus, a number is international, and no country code starts with 0 (a typo, or a
        // number split by an unquoted shell line). Removing such an entry, added before this check, stays possible.
        if (blocked && compact.startsWith('+0')) throw refused('is not an E.164 number or prefix: no country code starts with 0');
        // Written without its plus (or 00), a number is national (021 …) or a piece of one an unquoted shell line split
        // (+64 21 555): taken as international it would block another country, or all of one. Removal reads it as before.
        if (blocked && !compact.startsWith('+') && !compact.startsWith('00'))
          throw refused('is not in international form: write it with + and its country code (+6421…), and quote a number that has spaces');
        const prefix = normalizeBlockPrefix(p);
        if (prefix === undefined) throw refused('is not an E.164 number or prefix (+ and 1..15 digits)');
        // 000… is 00 and a country code starting with 0: none does.
        if (blocked && prefix.startsWith('+0')) throw refused('is not an E.164 number or prefix: no country code starts with 0');
        return prefix;
      });
      const scope = await scopeOf(applicationName);
      if (!blocked) await refuseAbsent(scope, applicationName, normalized);
      const at = Date.now();
      const entries = normalized.map((prefix) => ({ scope, prefix, blocked, at }));
      await deps.store.recordBlocks(entries);
      await deps.state.setBlocks(entries);
      return view(entries);
    },
    async list(applicationName) {
      const entries = applicationName === '' ? await deps.store.listBlocks() : await deps.store.listBlocks(await scopeOf(applicationName));
      return view(entries);
    },
    async load(scopes) {
      const wanted = scopes && new Set(scopes);
      const entries = await deps.store.listBlocks();
      await deps.state.setBlocks(wanted ? entries.filter((e) => wanted.has(e.scope)) : entries);
    },
  };
}
