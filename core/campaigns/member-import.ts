import { claimedByAnother, type OwnerOfAddress } from '../messages/claimed-addresses';
import type { CampaignRecord, CampaignStore, MemberRow } from '../ports/campaign-store';
import type { HotState } from '../ports/state';
import type { NumericIds } from '../messages/numeric-ids';
import { HermodError } from '../../lib/errors';
import { hasPlaceholder, validateContent } from './message-template';
import { createSeenHandsets } from './seen-handsets';

export const MAX_MEMBERS = 1_000_000;

export interface ImportedMember {
  destination: string;
  params: readonly string[];
}

export interface ImportFields {
  name: string;
  batch: string;
  email: string;
  removeOptOuts: boolean;
  /** Campaigns: when to send (epoch ms) and the offset it was written with. */
  scheduleAt?: number;
  utcOffsetMinutes: number;
  content: string;
  template: string;
  mask: string;
  optOutResponse: string;
  replyResponse: string;
  /** Problems the gateway already found (members it dropped). */
  errorMessages: string;
  /** The request's Idempotency-Key and body as one key ('' without a key): see `KeyedImport`. */
  dedupKey?: string;
}

export type ImportPart =
  | { part: 'begin'; applicationId: string; kind: 'list' | 'campaign' }
  | { part: 'members'; members: readonly ImportedMember[] }
  | { part: 'commit'; fields: ImportFields };

export interface ImportOutcome {
  id: number;
  errorMessages: string;
  members: number;
  optedOut: number;
  /** The first answer, to a retry under its dedupKey: nothing was created now. */
  replayed?: boolean;
}

/**
 * Imports the members of a new list or campaign as they stream in: each chunk
 * is checked against the application's opt-outs and written to history in
 * inserts of many thousand rows, so a million members never sit in memory.
 * The list or campaign row is written last, at commit; until then the members
 * belong to nothing visible, and an import that fails or is cancelled leaves
 * nothing behind that any answer shows. A member whose handset an earlier
 * member has, however the number is written (`+64…`, `64…`, `0064…`), is
 * removed, and `error_messages` says how many were: one message per handset.
 */
export function createMemberImporter(deps: {
  store: CampaignStore;
  state: HotState;
  numericIds: NumericIds;
  /** A campaign's template content by name (or id), for the application. */
  templateContent: (applicationId: string, template: string) => Promise<string | undefined>;
  /** A committed campaign goes to the campaign scheduler. */
  onCampaign: (campaign: CampaignRecord) => void;
  /** Who claimed an address: a campaign whose mask another application claimed is refused. */
  ownerOfAddress?: OwnerOfAddress;
  insertRows?: number;
  now?: () => number;
}) {
  const insertRows = deps.insertRows ?? 50_000;
  const now = deps.now ?? Date.now;

  return async function importMembers(parts: AsyncIterable<ImportPart>): Promise<ImportOutcome> {
    let begin: Extract<ImportPart, { part: 'begin' }> | undefined;
    let id = 0;
    let count = 0;
    let optedOut = 0;
    let duplicates = 0;
    const seen = createSeenHandsets();
    let pending: MemberRow[] = [];
    let writing: Promise<void> = Promise.resolve();
    // From the moment the list or campaign row is being written, its members stay whatever happens.
    let committing = false;

    // One insert in flight while the next chunk is gathered.
    const write = async (rows: MemberRow[]): Promise<void> => {
      await writing;
      writing = deps.store.insertMembers(id, rows);
      writing.catch(() => undefined); // awaited by the next write or the commit
    };

    try {
      return await run();
    } catch (err) {
      // Nothing of a failed or cancelled import is visible; its members are removed too (best effort).
      if (id && !committing) {
        const owner = id;
        void writing
          .catch(() => undefined)
          .then(() => deps.store.deleteMembers(owner))
          .catch(() => undefined);
      }
      throw err;
    }

    async function run(): Promise<ImportOutcome> {
      for await (const p of parts) {
        if (p.part === 'begin') {
          if (begin) throw new HermodError('invalid_attrib', 'import began twice');
          if (!p.applicationId) throw new HermodError('unauthorized', 'application is required');
          begin = p;
          id = deps.numericIds();
          continue;
        }
        if (!begin) throw new HermodError('invalid_attrib', 'import must begin with its application and kind');
        if (p.part === 'members') {
          if (count + p.members.length > MAX_MEMBERS) throw new HermodError('unprocessable', `members: at most ${MAX_MEMBERS} members`);
          const members = p.members.filter((m) => seen.add(m.destination));
          duplicates += p.members.length - members.length;
          const opted = await deps.state.areOptedOut(members.map((m) => ({ applicationId: begin!.applicationId, handset: m.destination })));
          members.forEach((m, i) => {
            if (opted[i]) optedOut++;
            pending.push({ position: count++, destination: m.destination, params: m.params, optedOut: opted[i]! });
          });
          if (pending.length >= insertRows) {
            await write(pending);
            pending = [];
          }
          continue;
        }
        // Commit.
        const f = p.fields;
        if (count === 0) throw new HermodError('unprocessable', 'members: at least one member is required');
        // A retry of a request whose list or campaign was created, its answer lost with a core that died: the first answer, nothing new.
        const earlier = f.dedupKey ? await deps.store.findKeyedImport(begin.applicationId, f.dedupKey) : undefined;
        if (earlier) {
          await writing.catch(() => undefined);
          await deps.store.deleteMembers(id).catch(() => undefined);
          return { id: earlier.id, errorMessages: earlier.errorMessages, members: earlier.members, optedOut: earlier.optedOut, replayed: true };
        }
        const campaign = begin.kind === 'campaign' ? await prepareCampaign(begin.applicationId, f) : undefined;
        await write(pending);
        pending = [];
        await writing;
        const at = now();
        const removed = f.removeOptOuts ? optedOut : 0;
        if (removed === count) throw new HermodError('unprocessable', `members: all ${count} members opted out and were removed; nothing is left`);
        committing = true;
        const notes = [
          f.errorMessages,
          duplicates > 0 ? `${duplicates} duplicate member${duplicates === 1 ? ' was' : 's were'} removed (the handset of an earlier member)` : '',
          removed > 0 ? `${removed} opted-out member${removed === 1 ? ' was' : 's were'} removed` : '',
        ]
          .filter(Boolean)
          .join('; ');
        const outcome: ImportOutcome = { id, errorMessages: notes, members: count - removed, optedOut: removed };
        // Remembered before the row: a crash between the two leaves a key whose row is missing, which a retry passes over.
        if (f.dedupKey) await deps.store.rememberKeyedImport({ applicationId: begin.applicationId, dedupKey: f.dedupKey, kind: begin.kind, ...outcome, at });
        if (campaign) {
          const record: CampaignRecord = {
            ...campaign,
            id,
            memberCount: count,
            removedOptOuts: removed,
            numericBase: deps.numericIds.reserve(count),
            createdAt: at,
            updatedAt: at,
          };
          await deps.store.upsertCampaign(record);
          deps.onCampaign(record);
        } else {
          await deps.store.upsertList({
            id,
            applicationId: begin.applicationId,
            name: f.name,
            batch: f.batch,
            email: f.email,
            removeOptOuts: f.removeOptOuts,
            memberCount: count,
            createdAt: at,
            deleted: false,
            updatedAt: at,
          });
        }
        return outcome;
      }
      await writing.catch(() => undefined);
      throw new HermodError('invalid_attrib', 'import ended without a commit');
    }
  };

  async function prepareCampaign(
    applicationId: string,
    f: ImportFields,
  ): Promise<Omit<CampaignRecord, 'id' | 'memberCount' | 'removedOptOuts' | 'numericBase' | 'createdAt' | 'updatedAt'>> {
    if (f.scheduleAt === undefined) throw new HermodError('unprocessable', 'schedule is required');
    if (f.content && f.template) throw new HermodError('unprocessable', 'give either content or template, not both');
    let content = f.content;
    if (!content) {
      if (!f.template) throw new HermodError('unprocessable', 'content or template is required');
      const found = await deps.templateContent(applicationId, f.template);
      if (found === undefined) throw new HermodError('unprocessable', `template ${JSON.stringify(f.template)} is not a template of this application`);
      content = found;
    }
    validateContent(content); // refuses unknown placeholders and content too long now rather than at send time
    // An answer to a reply is sent as written: a placeholder in one would reach the handset in its braces.
    for (const [field, text] of [
      ['reply_response', f.replyResponse],
      ['opt_out_response', f.optOutResponse],
    ] as const) {
      if (text && hasPlaceholder(text))
        throw new HermodError(
          'unprocessable',
          `${field} is sent as it is written, so its placeholders ({{…}}) would reach the handset unfilled: write the text itself`,
          {
            fields: [{ field, description: 'has a placeholder, which answers to replies do not fill' }],
          },
        );
    }
    const claimed = deps.ownerOfAddress && (await claimedByAnother(deps.ownerOfAddress, applicationId, [{ field: 'mask', address: f.mask }]));
    if (claimed) throw new HermodError('unprocessable', claimed, { fields: [{ field: 'mask', description: 'claimed by another application' }] });
    return {
      applicationId,
      name: f.name,
      batch: f.batch,
      email: f.email,
      scheduleAt: f.scheduleAt,
      utcOffsetMinutes: f.utcOffsetMinutes,
      content,
      template: f.template,
      mask: f.mask,
      optOutResponse: f.optOutResponse,
      replyResponse: f.replyResponse,
      removeOptOuts: f.removeOptOuts,
      state: 'scheduled',
    };
  }
}

export type MemberImporter = ReturnType<typeof createMemberImporter>;
