import { parseIntegerId } from '../../lib/integer-id';
import { hostOf } from '../http/https-redirect';
import { sameTypedText } from '../../lib/typed-text';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Authenticator } from '../auth';
import type { CampaignsClient } from '../campaigns-client';
import type { ImportCommit, ImportResult } from '../../proto/gen/hermod/v1/campaigns';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { createValidator } from '../http/validator';
import { readJson } from '../http/read-json';
import { serveOpenApi } from '../http/openapi';
import { CAMPAIGN_MANAGER_OPENAPI } from './openapi';
import { CAMPAIGN_MANAGER_SCHEMAS, MAX_APPLICATION_NAME } from './schemas';
import { importBody } from './import-body';
import { respondWithStreamedJson } from './streamed-json';
import { listAsJson, listsAsJson, reportAsJson } from './answers';
import { parseCampaignSchedule } from './campaign-schedule';
import { checkSenderAddress } from '../../core/domain/sender-address';
import { checkSmsText } from '../../core/domain/control-characters';
import { checkJsonRequest } from '../http/json-request-headers';
import { idempotentStream } from '../http/idempotent-stream';
import { markRecovered, type IdempotencyStore } from '../http/idempotency';

export interface CampaignManagerDeps {
  campaigns: CampaignsClient;
  /** Idempotency-Key on list and campaign creation (core's Idempotency service). */
  core: IdempotencyStore;
  auth: Authenticator;
  log: Logger;
  maxBodyBytes: number;
  /** Largest list or campaign body. */
  maxImportBytes: number;
  /** How far ahead a campaign may be scheduled. */
  scheduleHorizonMs: number;
}

/** Campaign Manager: `/rest/campaign_manager/v1`. */
export function campaignManagerRouter(deps: CampaignManagerDeps): Router {
  const router = new Router({ prefix: '/rest/campaign_manager/v1' });
  const validate = createValidator(CAMPAIGN_MANAGER_SCHEMAS);
  serveOpenApi(router, CAMPAIGN_MANAGER_OPENAPI);

  /** The caller, who must be the application the path names. */
  const caller = async (ctx: Context): Promise<{ applicationId: string; applicationName: string }> => {
    const who = await deps.auth.authenticate(ctx.get('authorization'), ctx.ip);
    const named = ctx.params.application_name ?? '';
    if (named.length > MAX_APPLICATION_NAME) throw new HermodError('invalid_attrib', `application_name is at most ${MAX_APPLICATION_NAME} characters`);
    if (!sameTypedText(named, who.applicationName))
      throw new HermodError('forbidden', `credentials of ${who.applicationName} do not give access to application ${named}`);
    return who;
  };
  const integerId = (value: string | undefined, name: string): number => {
    const id = parseIntegerId(value);
    if (id === undefined) throw new HermodError('not_found', `${name} ${JSON.stringify(value ?? '')} is not an id`);
    return id;
  };
  // Absolute at the host the client asked for; a Host header that names none (`evil.com/x?`) gets a path alone.
  const base = (ctx: Context): string =>
    `${hostOf(ctx.host) === undefined ? '' : `${ctx.protocol}://${ctx.host}`}/rest/campaign_manager/v1/${encodeURIComponent(ctx.params.application_name!)}`;

  router.get('/healthz', async (ctx) => {
    const health = await deps.campaigns.health().catch((err: Error) => ({ ok: false, detail: err.message }));
    // Said in the log too: a probe's 500 is read by a load balancer, not by whoever looks for why (bulk sender trial).
    if (!health.ok) deps.log.warn('health check failed', { detail: health.detail });
    ctx.type = 'text/plain';
    ctx.status = health.ok ? 200 : 500;
    ctx.body = health.ok ? 'OK' : `error: ${health.detail}`;
  });

  router.get('/:application_name/lists', async (ctx) => {
    const who = await caller(ctx);
    await respondWithStreamedJson(ctx, listsAsJson(deps.campaigns.streamLists(who.applicationId)));
  });

  /** A list or campaign body imported at most once per Idempotency-Key; `answer` sets the 201. */
  const importOnce = async (
    ctx: Context,
    kind: 'list' | 'campaign',
    toCommit: (fields: Record<string, unknown>) => ImportCommit,
    answer: (result: ImportResult) => void,
  ): Promise<void> => {
    const who = await caller(ctx);
    checkJsonRequest(ctx, deps.maxImportBytes);
    await idempotentStream(ctx, deps.core, who.applicationId, 'campaign_manager', deps.maxImportBytes, async (body, dedupKey) => {
      const { result } = await importBody(body, { ...deps, validate, maxBytes: deps.maxImportBytes }, who.applicationId, kind, (fields) => ({
        ...toCommit(fields),
        dedupKey: dedupKey(),
      }));
      answer(result);
      markRecovered(ctx, [result.replayed]);
    });
  };

  router.post('/:application_name/lists', async (ctx) => {
    await importOnce(ctx, 'list', commitFields, (result) => {
      ctx.status = 201;
      ctx.set('Location', `${base(ctx)}/lists/${result.id}`);
      ctx.body = { id: result.id, ...(result.errorMessages ? { error_messages: result.errorMessages } : {}) };
    });
  });

  // The Location of a new list.
  router.get('/:application_name/lists/:list_id', async (ctx) => {
    const who = await caller(ctx);
    const id = integerId(ctx.params.list_id, 'list_id');
    await respondWithStreamedJson(ctx, listAsJson(deps.campaigns.streamLists(who.applicationId, id), id));
  });

  router.delete('/:application_name/lists/:list_id', async (ctx) => {
    const who = await caller(ctx);
    const id = integerId(ctx.params.list_id, 'list_id');
    const deleted = await deps.campaigns.deleteLists(who.applicationId, [id]);
    if (deleted.length === 0) throw new HermodError('not_found', 'List cannot be deleted: no such list');
    ctx.status = 204;
  });

  router.post('/:application_name/delete_multiple_lists', async (ctx) => {
    const who = await caller(ctx);
    const body = validate<{ list_ids: number[] }>('DeleteMultipleListsRequest', await readJson(ctx, deps.maxBodyBytes));
    const deleted = await deps.campaigns.deleteLists(who.applicationId, body.list_ids);
    if (deleted.length === 0) throw new HermodError('not_found', 'Lists cannot be deleted: none of them is a list of this application');
    ctx.body = { list_ids: deleted, message: 'IDs of deleted lists' };
  });

  router.post('/:application_name/scheduled_campaigns', async (ctx) => {
    await importOnce(
      ctx,
      'campaign',
      (f) => {
        const schedule = parseCampaignSchedule(f.schedule as string, deps.scheduleHorizonMs);
        checkSenderAddress(f.mask as string | undefined, 'mask');
        for (const field of ['opt_out_response', 'reply_response']) if (typeof f[field] === 'string') checkSmsText(f[field], field);
        return {
          ...commitFields(f),
          schedule: schedule.at,
          utcOffsetMinutes: schedule.utcOffsetMinutes,
          content: (f.content as string | undefined) ?? '',
          template: (f.template as string | undefined) ?? '',
          mask: (f.mask as string | undefined) ?? '',
          optOutResponse: (f.opt_out_response as string | undefined) ?? '',
          replyResponse: (f.reply_response as string | undefined) ?? '',
        };
      },
      (result) => {
        ctx.status = 201;
        ctx.set('Location', `${base(ctx)}/${result.id}/report`);
        ctx.body = { id: result.id, ...(result.errorMessages ? { error_messages: result.errorMessages } : {}) };
      },
    );
  });

  router.get('/:application_name/templates', async (ctx) => {
    const who = await caller(ctx);
    const templates = await deps.campaigns.listTemplates(who.applicationId);
    ctx.body = templates.map((t) => ({ id: t.id, name: t.name }));
  });

  router.get('/:application_name/:campaign_id/report', async (ctx) => {
    const who = await caller(ctx);
    const id = integerId(ctx.params.campaign_id, 'campaign_id');
    await respondWithStreamedJson(ctx, reportAsJson(deps.campaigns.streamCampaignReport(who.applicationId, id)));
  });

  return router;
}

function commitFields(f: Record<string, unknown>): ImportCommit {
  return {
    name: f.name as string,
    batch: (f.batch as string | undefined) ?? '',
    email: (f.email as string | undefined) ?? '',
    removeOptOuts: f.remove_opt_outs !== false,
    schedule: undefined,
    utcOffsetMinutes: 0,
    content: '',
    template: '',
    mask: '',
    optOutResponse: '',
    replyResponse: '',
    errorMessages: '',
    dedupKey: '',
  };
}
