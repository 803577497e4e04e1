import type { AccountStore } from '../ports/account-store';
import type { CampaignStore, MemberRow } from '../ports/campaign-store';
import type { HotState } from '../ports/state';
import { measureSms } from '../domain/sms-segments';
import { HermodError } from '../../lib/errors';
import { applicationByRef } from './campaign-control';
import { compileContent, renderedTooLong, validateContent } from './message-template';
import { isMemberDestination } from '../domain/member-destination';
import type { Templates } from './templates';

export interface DryRunRequest {
  application: string;
  listId: string;
  content: string;
  template: string;
}

export interface DryRunResult {
  members: number;
  sendable: number;
  segmentsTotal: number;
  segments: { encoding: string; segments: number; members: number }[];
  dropped: { destination: string; reason: string }[];
  droppedTotal: number;
  droppedByReason: Record<string, number>;
  /** Members sent, but not as the content reads: `missing_parameter` (sent with it as nothing, as the campaign renders it). */
  warned: { destination: string; reason: string }[];
  warnedTotal: number;
  ratePerSecond: number;
  estimatedSeconds: number;
}

/** Dropped and warned members listed by name; the rest are only counted. */
const MAX_LISTED = 1000;
const PAGE = 5000;
const PARAM = /\{\{\s*param([1-6])\s*\}\}/g;
const ENCODING = { gsm7: 'GSM-7', ucs2: 'UCS-2' } as const;

/**
 * What a campaign of this list and content would do, without sending or
 * storing anything: each member is dropped (opted out, an invalid
 * destination, on a block list, or `too_long`: over 1,600 characters once its
 * placeholders are filled) or measured after its placeholders are filled
 * (GSM-7 or UCS-2, and how many SMS), as the campaign would fill them: a
 * parameter the member lacks as nothing, with a warning. The duration is the
 * segments at `ratePerSecond` submits per second.
 */
export function createCampaignDryRun(deps: { store: CampaignStore; applications: AccountStore; state: HotState; templates: Templates; ratePerSecond: number }) {
  return async function dryRun(req: DryRunRequest): Promise<DryRunResult> {
    const app = await applicationByRef(deps.applications, req.application);
    if (Boolean(req.content) === Boolean(req.template)) throw new HermodError('invalid_attrib', 'give exactly one of content and template');
    const content = req.content || (await deps.templates.contentFor(app.id, req.template));
    if (content === undefined) throw new HermodError('not_found', `application ${app.name} has no template ${JSON.stringify(req.template)}`);
    validateContent(content);
    const render = compileContent(content);
    const used = [...new Set([...content.matchAll(PARAM)].map((m) => Number(m[1]) - 1))];
    const list = (await deps.store.listLists(app.id)).find((l) => String(l.id) === req.listId);
    if (!list) throw new HermodError('not_found', `application ${app.name} has no list ${JSON.stringify(req.listId)}`);

    const result: DryRunResult = {
      members: 0,
      sendable: 0,
      segmentsTotal: 0,
      segments: [],
      dropped: [],
      droppedTotal: 0,
      droppedByReason: {},
      warned: [],
      warnedTotal: 0,
      ratePerSecond: deps.ratePerSecond,
      estimatedSeconds: 0,
    };
    const histogram = new Map<string, { encoding: string; segments: number; members: number }>();
    const drop = (m: MemberRow, reason: string): void => {
      result.droppedTotal++;
      result.droppedByReason[reason] = (result.droppedByReason[reason] ?? 0) + 1;
      if (result.dropped.length < MAX_LISTED) result.dropped.push({ destination: m.destination, reason });
    };
    for (let from = 0; ; ) {
      const page = await deps.store.readMembers(list.id, from, PAGE);
      if (page.length === 0) break;
      from = page[page.length - 1]!.position + 1;
      const pairs = page.map((m) => ({ applicationId: app.id, handset: m.destination, destination: m.destination }));
      const [optedOut, blocks] = await Promise.all([deps.state.areOptedOut(pairs), deps.state.findBlocks(pairs)]);
      page.forEach((m, i) => {
        result.members++;
        const reason =
          m.optedOut || optedOut[i]
            ? 'opted_out'
            : !isMemberDestination(m.destination)
              ? 'invalid_destination'
              : blocks[i] !== undefined
                ? 'blocked'
                : undefined;
        if (reason) {
          drop(m, reason);
          return;
        }
        const text = render(m);
        // Never sent: the campaign ends it `rejected`.
        if (renderedTooLong(text)) {
          drop(m, 'too_long');
          return;
        }
        if (used.some((slot) => !m.params[slot])) {
          result.warnedTotal++;
          if (result.warned.length < MAX_LISTED) result.warned.push({ destination: m.destination, reason: 'missing_parameter' });
        }
        const { encoding, count } = measureSms(text);
        const key = `${encoding}|${count}`;
        const bucket = histogram.get(key) ?? { encoding: ENCODING[encoding], segments: count, members: 0 };
        bucket.members++;
        histogram.set(key, bucket);
        result.sendable++;
        result.segmentsTotal += count;
      });
    }
    result.segments = [...histogram.values()].sort((a, b) => a.encoding.localeCompare(b.encoding) || a.segments - b.segments);
    result.estimatedSeconds = result.segmentsTotal / deps.ratePerSecond;
    return result;
  };
}
