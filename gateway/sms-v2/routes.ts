import Router from '@koa/router';
import type { Authenticator } from '../auth';
import type { CoreClient } from '../core-client';
import { Direction } from '../../proto/gen/hermod/v1/messages';
import { HermodError, isErrorCode } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { createValidator } from '../http/validator';
import { readJson } from '../http/read-json';
import { parseSchedule } from '../http/schedule';
import { checkSenderAddress } from '../../core/domain/sender-address';
import { checkLabels, checkSmsText } from '../../core/domain/control-characters';
import { checkDestination } from '../../core/domain/destination-problem';
import { idempotent, markRecovered } from '../http/idempotency';
import { serveOpenApi } from '../http/openapi';
import { smsInterfaceMessage } from '../http/sms-interface-message';
import { SMS_V2_OPENAPI } from './openapi';
import { SMS_V2_SCHEMAS } from './schemas';

interface SingleMessage {
  destination: string;
  content: string;
  source?: string;
  reference?: string;
  class?: string;
  mask?: string;
  sms_class?: number;
  scheduled?: string;
  integration_id?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** SMS Gateway v2: `/rest/sms/v2`. */
export function smsV2Router(deps: { core: CoreClient; auth: Authenticator; log: Logger; maxBodyBytes: number; scheduleHorizonMs: number }): Router {
  const router = new Router({ prefix: '/rest/sms/v2' });
  const validate = createValidator(SMS_V2_SCHEMAS);
  serveOpenApi(router, SMS_V2_OPENAPI);

  router.post('/messages', async (ctx) => {
    const caller = await deps.auth.authenticate(ctx.get('authorization'), ctx.ip);
    const body = validate<SingleMessage>('SingleMessage', await readJson(ctx, deps.maxBodyBytes));
    checkDestination(body.destination, 'destination');
    const scheduled = body.scheduled === undefined ? undefined : parseSchedule(body.scheduled, 'scheduled', deps.scheduleHorizonMs);
    checkSenderAddress(body.source, 'source');
    checkSenderAddress(body.mask, 'mask');
    checkSmsText(body.content, 'content');
    checkLabels(body);
    await idempotent(ctx, deps.core, caller.applicationId, 'sms_v2', async (dedupKeyOf) => {
      const result = await deps.core.send({
        applicationId: caller.applicationId,
        channel: 'sms',
        destination: body.destination,
        content: body.content,
        source: body.source ?? '',
        reference: body.reference ?? '',
        messageClass: body.class ?? '',
        mask: body.mask ?? '',
        smsClass: body.sms_class ?? 0,
        scheduled,
        integrationId: body.integration_id ?? '',
        interface: 'sms_v2',
        dedupKey: dedupKeyOf(0),
      });
      if (result.outcome?.$case !== 'accepted') {
        // Core's own reason, with its status (a message it could not take now is a 503 the client retries).
        const code = result.outcome?.value.code ?? '';
        throw new HermodError(isErrorCode(code) ? code : 'internal', result.outcome?.value.message ?? 'core gave no answer');
      }
      ctx.status = 202;
      ctx.body = { id: result.outcome.value.id, status: 'accepted', detail: body.destination };
      markRecovered(ctx, [result.outcome.value.replayed]);
    });
  });

  router.get('/messages', async (ctx) => {
    const caller = await deps.auth.authenticate(ctx.get('authorization'), ctx.ip);
    const id = ctx.query.id;
    // ?id=X&id=X parses as an array: say so, not that id is missing.
    if (Array.isArray(id)) throw new HermodError('invalid_attrib', 'query parameter id is given more than once; give it once');
    if (typeof id !== 'string' || id === '') throw new HermodError('missing_attrib', 'query parameter id is required');
    if (!UUID.test(id)) throw new HermodError('invalid_attrib', 'query parameter id must be a UUID');
    const m = smsInterfaceMessage(await deps.core.getMessage(caller.applicationId, id.toLowerCase()), id);
    ctx.body = {
      id: m.id,
      source: m.source,
      destination: m.destination,
      direction: m.direction === Direction.DIRECTION_MO ? 'MO' : 'MT',
      reference: m.reference,
      content: m.content,
      status: m.status,
    };
  });

  return router;
}
