import { LIST_CAMPAIGNS, PROGRESS_RANGE } from './campaign-progress-queries';
import type { CampaignRecord, CampaignState, CampaignStore, ListRecord, MemberRow, ReportRecord, TemplateRecord } from '../ports/campaign-store';
import { isMessageStatus } from '../domain/message-status';
import { utcOffsetName } from '../domain/utc-offset-name';
import {
  CAMPAIGN_INSERTS,
  DELETE_MEMBERS,
  FIND_CAMPAIGN,
  FIND_KEYED_IMPORT,
  GET_CAMPAIGN,
  LIST_LISTS,
  LIST_TEMPLATES,
  LIST_UNSENT_CAMPAIGNS,
  MAX_RESERVED_NUMERIC_ID,
  MESSAGE_IDS_IN_RANGE,
  READ_MEMBERS,
  REPORT_JSON,
  REPORT_RANGE,
} from './campaign-queries';
import { dateTime64, jsonEachRow, toNumber } from './rows';

/** How sql-history lets the campaign store reach the engine (timed, counted, errors mapped). */
export interface SqlIo {
  select(what: string, sql: string, params: Record<string, unknown>): Promise<Record<string, unknown>[]>;
  insert(target: { table: string; columns: readonly string[] }, rows: Buffer): Promise<void>;
  command(what: string, sql: string, params: Record<string, unknown>): Promise<void>;
  stream(what: string, sql: string, params: Record<string, unknown>): AsyncIterable<unknown[][]>;
  streamBytes(what: string, sql: string, params: Record<string, unknown>): AsyncIterable<Uint8Array>;
}

/** A REPORT_RANGE row (positional columns) as the port's record. */
function toReportRecord(r: unknown[]): ReportRecord {
  const raw = str(r[3]);
  return {
    position: toNumber(r[0]),
    messageNumericId: toNumber(r[1]),
    mobile: str(r[2]),
    sentAt: toNumber(r[5]),
    status: raw !== '' && isMessageStatus(raw) ? raw : 'accepted',
    statusAt: toNumber(r[4]),
  };
}

const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
const bool = (v: unknown): boolean => toNumber(v) !== 0;

function toList(r: Record<string, unknown>): ListRecord {
  return {
    id: toNumber(r.id),
    applicationId: str(r.applicationId),
    name: str(r.name),
    batch: str(r.batch),
    email: str(r.email),
    removeOptOuts: bool(r.removeOptOuts),
    memberCount: toNumber(r.memberCount),
    createdAt: toNumber(r.createdAt),
    deleted: bool(r.deleted),
    updatedAt: toNumber(r.updatedAt),
  };
}

function toCampaign(r: Record<string, unknown>): CampaignRecord {
  return {
    id: toNumber(r.id),
    applicationId: str(r.applicationId),
    name: str(r.name),
    batch: str(r.batch),
    email: str(r.email),
    scheduleAt: toNumber(r.scheduleAt),
    utcOffsetMinutes: toNumber(r.utcOffsetMinutes),
    content: str(r.content),
    template: str(r.template),
    mask: str(r.mask),
    optOutResponse: str(r.optOutResponse),
    replyResponse: str(r.replyResponse),
    removeOptOuts: bool(r.removeOptOuts),
    memberCount: toNumber(r.memberCount),
    removedOptOuts: toNumber(r.removedOptOuts),
    numericBase: toNumber(r.numericBase),
    state: str(r.state) as CampaignState,
    createdAt: toNumber(r.createdAt),
    updatedAt: toNumber(r.updatedAt),
  };
}

/** Lists, campaigns, members, templates and reports on a ClickHouse engine (chDB or a server): one set of SQL for both. */
export function createSqlCampaignStore(io: SqlIo): CampaignStore {
  return {
    async insertMembers(ownerId, rows) {
      if (rows.length === 0) return;
      await io.insert(
        CAMPAIGN_INSERTS.members,
        jsonEachRow(rows, (m) => ({
          owner_id: ownerId,
          position: m.position,
          destination: m.destination,
          param1: m.params[0] ?? '',
          param2: m.params[1] ?? '',
          param3: m.params[2] ?? '',
          param4: m.params[3] ?? '',
          param5: m.params[4] ?? '',
          param6: m.params[5] ?? '',
          opted_out: m.optedOut ? 1 : 0,
        })),
      );
    },
    async deleteMembers(ownerId) {
      await io.command('deleteMembers', DELETE_MEMBERS, { ownerId });
    },
    async readMembers(ownerId, fromPosition, limit) {
      const rows = await io.select('readMembers', READ_MEMBERS, { ownerId, from: fromPosition, limit });
      return rows.map(
        (r): MemberRow => ({
          position: toNumber(r.position),
          destination: str(r.destination),
          params: [str(r.param1), str(r.param2), str(r.param3), str(r.param4), str(r.param5), str(r.param6)],
          optedOut: bool(r.optedOut),
        }),
      );
    },
    async upsertList(l) {
      await io.insert(
        CAMPAIGN_INSERTS.lists,
        jsonEachRow([l], (x) => ({
          id: x.id,
          application_id: x.applicationId,
          name: x.name,
          batch: x.batch,
          email: x.email,
          remove_opt_outs: x.removeOptOuts ? 1 : 0,
          member_count: x.memberCount,
          created_at: dateTime64(x.createdAt),
          deleted: x.deleted ? 1 : 0,
          updated_at: dateTime64(x.updatedAt),
        })),
      );
    },
    async rememberKeyedImport(k) {
      await io.insert(
        CAMPAIGN_INSERTS.keyedImports,
        jsonEachRow([k], (x) => ({
          application_id: x.applicationId,
          dedup_key: x.dedupKey,
          kind: x.kind,
          id: x.id,
          error_messages: x.errorMessages,
          members: x.members,
          opted_out: x.optedOut,
          at: dateTime64(x.at),
        })),
      );
    },
    async findKeyedImport(applicationId, dedupKey) {
      const [r] = await io.select('findKeyedImport', FIND_KEYED_IMPORT, { applicationId, dedupKey });
      if (!r) return undefined;
      return {
        applicationId,
        dedupKey,
        kind: str(r.kind) === 'campaign' ? 'campaign' : 'list',
        id: toNumber(r.id),
        errorMessages: str(r.errorMessages),
        members: toNumber(r.members),
        optedOut: toNumber(r.optedOut),
        at: toNumber(r.at),
      };
    },
    async listLists(applicationId) {
      return (await io.select('listLists', LIST_LISTS, { applicationId })).map(toList);
    },
    async upsertCampaign(c) {
      await io.insert(
        CAMPAIGN_INSERTS.campaigns,
        jsonEachRow([c], (x) => ({
          id: x.id,
          application_id: x.applicationId,
          name: x.name,
          batch: x.batch,
          email: x.email,
          schedule_at: dateTime64(x.scheduleAt),
          utc_offset_minutes: x.utcOffsetMinutes,
          content: x.content,
          template: x.template,
          mask: x.mask,
          opt_out_response: x.optOutResponse,
          reply_response: x.replyResponse,
          remove_opt_outs: x.removeOptOuts ? 1 : 0,
          member_count: x.memberCount,
          removed_opt_outs: x.removedOptOuts,
          numeric_base: x.numericBase,
          state: x.state,
          created_at: dateTime64(x.createdAt),
          updated_at: dateTime64(x.updatedAt),
        })),
      );
    },
    async getCampaign(applicationId, id) {
      const rows = await io.select('getCampaign', GET_CAMPAIGN, { applicationId, id });
      return rows.length > 0 ? toCampaign(rows[0]!) : undefined;
    },
    async findCampaign(id) {
      const rows = await io.select('findCampaign', FIND_CAMPAIGN, { id });
      return rows.length > 0 ? toCampaign(rows[0]!) : undefined;
    },
    async listUnsentCampaigns() {
      return (await io.select('listUnsentCampaigns', LIST_UNSENT_CAMPAIGNS, {})).map(toCampaign);
    },
    async maxReservedNumericId() {
      const rows = await io.select('maxReservedNumericId', MAX_RESERVED_NUMERIC_ID, {});
      return rows.length > 0 ? toNumber(rows[0]!.top ?? 0) : 0;
    },
    async upsertTemplate(t) {
      await io.insert(
        CAMPAIGN_INSERTS.templates,
        jsonEachRow([t], (x) => ({ id: x.id, application_id: x.applicationId, name: x.name, content: x.content, updated_at: dateTime64(x.updatedAt) })),
      );
    },
    async listTemplates(applicationId) {
      const rows = await io.select('listTemplates', LIST_TEMPLATES, { applicationId });
      return rows.map(
        (r): TemplateRecord => ({
          id: toNumber(r.id),
          applicationId: str(r.applicationId),
          name: str(r.name),
          content: str(r.content),
          updatedAt: toNumber(r.updatedAt),
        }),
      );
    },
    async messageIdsInRange(lo, hi) {
      const rows = await io.select('messageIdsInRange', MESSAGE_IDS_IN_RANGE, { lo, hi });
      return new Set(rows.map((r) => str(r.id)));
    },
    async listCampaigns(applicationId) {
      return (await io.select('listCampaigns', LIST_CAMPAIGNS, { applicationId })).map(toCampaign);
    },
    async progressRange(lo, hi, since) {
      const [r] = await io.select('progressRange', PROGRESS_RANGE, { lo, hi, since });
      const n = (v: unknown): number => (r ? toNumber(v ?? 0) : 0);
      return {
        messages: n(r?.messages),
        handed: n(r?.handed),
        delivered: n(r?.delivered),
        failed: n(r?.failed),
        blocked: n(r?.blocked),
        deficient: n(r?.deficient),
        dead: n(r?.dead),
        waiting: n(r?.waiting),
        handedSince: n(r?.handedSince),
      };
    },
    async *reportRows(lo, hi) {
      for await (const rows of io.stream('reportRows', REPORT_RANGE, { lo, hi })) yield rows.map(toReportRecord);
    },
    async *reportJson(lo, hi, look) {
      const params = {
        lo,
        hi,
        head: `{"list_name":${JSON.stringify(look.listName)},"message_id":`,
        offsetMs: look.utcOffsetMinutes * 60_000,
        zone: utcOffsetName(look.utcOffsetMinutes),
      };
      // Each row's text comes with a comma before it: the first one is dropped.
      let first = true;
      for await (const bytes of io.streamBytes('reportJson', REPORT_JSON, params)) {
        const rest = first ? bytes.subarray(1) : bytes;
        if (bytes.length > 0) first = false;
        if (rest.length > 0) yield rest;
      }
    },
    async reportRange(lo, hi) {
      const all: ReportRecord[] = [];
      for await (const rows of io.stream('reportRange', REPORT_RANGE, { lo, hi })) for (const r of rows) all.push(toReportRecord(r));
      return all;
    },
  };
}
