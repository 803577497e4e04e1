import { once } from 'node:events';
import { applicationNamed } from '../accounts/application-named';
import type { sendUnaryData, ServerReadableStream, ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import {
  ImportKind,
  type CampaignReportRequest,
  type DeleteListsRequest,
  type ImportChunk,
  type ImportResult,
  type ListsChunk,
  type ListTemplatesRequest,
  type ReportChunk,
  type StreamListsRequest,
  type UpsertTemplateRequest,
} from '../../proto/gen/hermod/v1/campaigns';
import type { CampaignStore } from '../ports/campaign-store';
import type { AccountStore } from '../ports/account-store';
import type { HistoryHealth } from '../ports/history';
import type { HotState } from '../ports/state';
import type { MemberImporter, ImportPart } from '../campaigns/member-import';
import type { Templates } from '../campaigns/templates';
import { campaignMessageRange } from '../campaigns/campaign-message-ids';
import { HermodError } from '../../lib/errors';
import { toServiceError } from '../../lib/grpc-errors';
import { timeServerCall, unaryHandler } from './unary-handler';
import { TimedOut, within } from '../../lib/within';

export interface CampaignServices {
  store: CampaignStore;
  applications: AccountStore;
  history: HistoryHealth;
  importMembers: MemberImporter;
  templates: Templates;
  state: HotState;
}

/** A message id no message has: hot state's answer for it says only that hot state answers. */
const HEALTH_PROBE_ID = 'health-probe';
const HEALTH_LIMIT_MS = 2000;
/** A history whose ping is late but that answered another call this recently is busy, not down. */
const BUSY_NOT_DOWN_MS = 10_000;

/** Undefined once `ask` resolves; why not, when it rejects or takes over HEALTH_LIMIT_MS. */
async function answered(what: string, ask: () => Promise<unknown>, answeredAt?: () => number): Promise<string | undefined> {
  try {
    await within(ask(), HEALTH_LIMIT_MS);
    return undefined;
  } catch (err) {
    // Busy, not down: a ping waiting behind a large import while the engine answers the other calls.
    if (err instanceof TimedOut && answeredAt && Date.now() - answeredAt() < BUSY_NOT_DOWN_MS) return undefined;
    if (err instanceof TimedOut) return `${what} did not answer within ${HEALTH_LIMIT_MS / 1000} s`;
    return `${what} unavailable: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Members read from history per query; members sent per gRPC message. */
const PAGE = 50_000;
const CHUNK = 5_000;
/**
 * Report bytes per gRPC message. Each one is copied twice on the way out (its
 * protobuf field, then grpc-js's frame) and once more into a message at the
 * gateway, so each copy must stay under glibc's mmap threshold that `hermod
 * start` sets (MALLOC_MMAP_THRESHOLD_, 128 KiB): above it every copy was a
 * fresh mapping, faulted in page by page and unmapped when freed, and a
 * million-row report spent most of core's CPU there (bench/RESULTS.md,
 * twelfth session).
 */
export const REPORT_BYTES = 64 * 1024;

/** A server stream: writes with backpressure, ends it, or ends it with the error's status. */
function serverStream<Req, Res>(method: string, handler: (req: Req, write: (res: Res) => Promise<void>, cancelled: () => boolean) => Promise<void>) {
  return (call: ServerWritableStream<Req, Res>): void => {
    const end = timeServerCall(method);
    const write = async (res: Res): Promise<void> => {
      if (call.cancelled) throw new HermodError('unavailable', 'the client went away');
      if (!call.write(res)) await once(call, 'drain');
    };
    handler(call.request, write, () => call.cancelled).then(
      () => (end(), call.end()),
      (err: unknown) => (end(err), call.emit('error', toServiceError(err))),
    );
  };
}

async function* importParts(call: ServerReadableStream<ImportChunk, ImportResult>): AsyncGenerator<ImportPart> {
  for await (const chunk of call as AsyncIterable<ImportChunk>) {
    const p = chunk.part;
    if (!p) continue;
    if (p.$case === 'begin') {
      yield { part: 'begin', applicationId: p.value.applicationId, kind: p.value.kind === ImportKind.IMPORT_KIND_CAMPAIGN ? 'campaign' : 'list' };
    } else if (p.$case === 'members') {
      yield { part: 'members', members: p.value.members };
    } else {
      const c = p.value;
      yield {
        part: 'commit',
        fields: {
          name: c.name,
          batch: c.batch,
          email: c.email,
          removeOptOuts: c.removeOptOuts,
          scheduleAt: c.schedule ? c.schedule.getTime() : undefined,
          utcOffsetMinutes: c.utcOffsetMinutes,
          content: c.content,
          template: c.template,
          mask: c.mask,
          optOutResponse: c.optOutResponse,
          replyResponse: c.replyResponse,
          errorMessages: c.errorMessages,
          dedupKey: c.dedupKey,
        },
      };
    }
  }
}

/** The Campaigns gRPC service: lists, campaigns, templates and reports, in and out in chunks. */
export function campaignsService(s: CampaignServices): UntypedServiceImplementation {
  return {
    importMembers(call: ServerReadableStream<ImportChunk, ImportResult>, callback: sendUnaryData<ImportResult>): void {
      const end = timeServerCall('ImportMembers');
      s.importMembers(importParts(call)).then(
        (r) => (end(), callback(null, { id: r.id, errorMessages: r.errorMessages, members: r.members, optedOut: r.optedOut, replayed: r.replayed ?? false })),
        (err: unknown) => (end(err), callback(toServiceError(err))),
      );
    },

    streamLists: serverStream('StreamLists', async (req: StreamListsRequest, write: (c: ListsChunk) => Promise<void>) => {
      if (!req.applicationId) throw new HermodError('unauthorized', 'application is required');
      for (const list of await s.store.listLists(req.applicationId)) {
        if (req.listId !== 0 && list.id !== req.listId) continue;
        // A list whose every member has opted out since is no active list (SPEC: a list has 1..1,000,000 members; one
        // made of opted-out members only is refused): it goes out with its first member shown, or not at all.
        let headed = false;
        for (let from = 0; from < list.memberCount; ) {
          const page = await s.store.readMembers(list.id, from, PAGE);
          if (page.length === 0) break;
          from = page[page.length - 1]!.position + 1;
          // Opted out when imported, or since (a STOP reply after the list was made).
          const now = list.removeOptOuts ? await s.state.areOptedOut(page.map((m) => ({ applicationId: req.applicationId, handset: m.destination }))) : [];
          const shown = list.removeOptOuts ? page.filter((m, i) => !m.optedOut && !now[i]) : page;
          if (shown.length > 0 && !headed) {
            headed = true;
            await write({ part: { $case: 'list', value: { id: list.id, name: list.name, created: new Date(list.createdAt), memberCount: list.memberCount } } });
          }
          for (let i = 0; i < shown.length; i += CHUNK) {
            await write({
              part: { $case: 'members', value: { members: shown.slice(i, i + CHUNK).map((m) => ({ destination: m.destination, params: [...m.params] })) } },
            });
          }
        }
      }
    }),

    deleteLists: unaryHandler('DeleteLists', async (req: DeleteListsRequest) => {
      if (!req.applicationId) throw new HermodError('unauthorized', 'application is required');
      const active = new Map((await s.store.listLists(req.applicationId)).map((l) => [l.id, l]));
      const deleted: number[] = [];
      for (const id of new Set(req.listIds)) {
        const list = active.get(id);
        if (!list) continue;
        await s.store.upsertList({ ...list, deleted: true, updatedAt: Math.max(Date.now(), list.updatedAt + 1) });
        deleted.push(id);
      }
      return { listIds: deleted };
    }),

    listTemplates: unaryHandler('ListTemplates', async (req: ListTemplatesRequest) => {
      let applicationId = req.applicationId;
      if (!applicationId && req.applicationName) {
        const app = await applicationNamed(s.applications, req.applicationName);
        if (!app) throw new HermodError('not_found', `no application named ${req.applicationName}`);
        applicationId = app.id;
      }
      if (!applicationId) throw new HermodError('unauthorized', 'application is required');
      return { templates: (await s.templates.list(applicationId)).map((t) => ({ id: t.id, name: t.name, content: t.content })) };
    }),

    upsertTemplate: unaryHandler('UpsertTemplate', async (req: UpsertTemplateRequest) => {
      const t = await s.templates.upsert(req.applicationName, req.name, req.content);
      return { id: t.id, name: t.name, content: t.content };
    }),

    streamCampaignReport: serverStream('StreamCampaignReport', async (req: CampaignReportRequest, write: (c: ReportChunk) => Promise<void>) => {
      if (!req.applicationId) throw new HermodError('unauthorized', 'application is required');
      const c = await s.store.getCampaign(req.applicationId, req.campaignId);
      if (!c) throw new HermodError('not_found', `no campaign ${req.campaignId}`);
      await write({ jsonRows: Buffer.alloc(0) });
      if (c.memberCount === 0) return;
      // One read of the whole campaign, its text sent on as the engine produces it, untouched.
      const { lo, hi } = campaignMessageRange(c.id, 0, c.memberCount);
      for await (const bytes of s.store.reportJson(lo, hi, { listName: c.name, utcOffsetMinutes: c.utcOffsetMinutes })) {
        for (let at = 0; at < bytes.length; at += REPORT_BYTES) {
          const piece = bytes.subarray(at, at + REPORT_BYTES);
          await write({ jsonRows: Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength) });
        }
      }
    }),

    // What every send needs: history and hot state (Redis at scale), each asked with a time limit, so a probe is
    // answered in time and a Redis that takes its command timeout to fail is told as down (an SRE trial: healthz
    // said OK through a Redis outage while every send waited 10 s for its 503).
    health: unaryHandler('Health', async () => {
      const [history, state] = await Promise.all([
        answered('history', () => s.history.ping(), s.history.answeredAt),
        answered('hot state', () => s.state.getStatus(HEALTH_PROBE_ID)),
      ]);
      const failed = [history, state].filter((d) => d !== undefined);
      return failed.length === 0 ? { ok: true, detail: 'ok' } : { ok: false, detail: failed.join('; ') };
    }),
  };
}
