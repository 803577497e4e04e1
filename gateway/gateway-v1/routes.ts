import { parseIntegerId } from '../../lib/integer-id';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Authenticator, Caller } from '../auth';
import type { CoreClient } from '../core-client';
import type { OutboundMessage } from '../../proto/gen/hermod/v1/messages';
import { HermodError, isErrorCode } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { createValidator } from '../http/validator';
import { readJson } from '../http/read-json';
import { parseSchedule } from '../http/schedule';
import { checkSenderAddress } from '../../core/domain/sender-address';
import { checkLabels, checkSmsText } from '../../core/domain/control-characters';
import { checkDestination, destinationProblem } from '../../core/domain/destination-problem';
import { idempotent, markRecovered } from '../http/idempotency';
import { serveOpenApi } from '../http/openapi';
import { smsInterfaceMessage } from '../http/sms-interface-message';
import { GATEWAY_V1_OPENAPI } from './openapi';
import { GATEWAY_V1_SCHEMAS, MAX_BROADCAST, VND } from './schemas';
import { answerType } from './answer-type';
import { METHOD_NOT_ALLOWED } from '../http/method-not-allowed';

interface MessageFields {
  content: string;
  source?: string;
  reference?: string;
  class?: string;
  mask?: string;
  sms_class?: number;
  scheduled?: string;
}

const E164 = new RegExp(GATEWAY_V1_SCHEMAS.Destination.pattern);
/** What v1's clients send (COMPAT.md): JSON, or v1's vendor type. */
const V1_TYPES = { named: ['application/json', VND] };

/** Gateway v1: `/rest/gateway`. Integer ids; 201 with a bare array on send. */
export function gatewayV1Router(deps: { core: CoreClient; auth: Authenticator; log: Logger; maxBodyBytes: number; scheduleHorizonMs: number }): Router {
  const router = new Router({ prefix: '/rest/gateway' });
  const validate = createValidator(GATEWAY_V1_SCHEMAS);
  serveOpenApi(router, GATEWAY_V1_OPENAPI);

  // Answer in the vendor media type when the client asked for it.
  const reply = (ctx: Context, status: number, body: unknown): void => {
    ctx.status = status;
    ctx.body = body;
    ctx.type = answerType(ctx);
  };

  const outbound = (caller: Caller, body: MessageFields, destination: string, scheduled: Date | undefined, dedupKey: string): OutboundMessage => ({
    applicationId: caller.applicationId,
    channel: 'sms',
    destination,
    content: body.content,
    source: body.source ?? '',
    reference: body.reference ?? '',
    messageClass: body.class ?? 'mt_message',
    mask: body.mask ?? '',
    smsClass: body.sms_class ?? 0,
    scheduled,
    integrationId: '',
    interface: 'gateway_v1',
    dedupKey,
  });

  router.post('/messages', async (ctx) => {
    const caller = await deps.auth.authenticate(ctx.get('authorization'), ctx.ip);
    const body = validate<MessageFields & { destination: string }>('Message', await readJson(ctx, deps.maxBodyBytes, V1_TYPES));
    checkDestination(body.destination, 'destination');
    const scheduled = body.scheduled === undefined ? undefined : parseSchedule(body.scheduled, 'scheduled', deps.scheduleHorizonMs);
    // Empty is none, as GET shows a message sent without one.
    checkSenderAddress(body.source || undefined, 'source');
    checkSenderAddress(body.mask || undefined, 'mask');
    checkSmsText(body.content, 'content');
    checkLabels(body);
    await idempotent(ctx, deps.core, caller.applicationId, 'gateway_v1', async (dedupKeyOf) => {
      const result = await deps.core.send(outbound(caller, body, body.destination, scheduled, dedupKeyOf(0)));
      if (result.outcome?.$case !== 'accepted') {
        const code = result.outcome?.value.code ?? '';
        throw new HermodError(isErrorCode(code) ? code : 'internal', result.outcome?.value.message ?? 'core gave no answer');
      }
      reply(ctx, 201, [result.outcome.value.numericId]);
      markRecovered(ctx, [result.outcome.value.replayed]);
    });
  });

  router.post('/messages/broadcast', async (ctx) => {
    const caller = await deps.auth.authenticate(ctx.get('authorization'), ctx.ip);
    const raw = await readJson(ctx, deps.maxBodyBytes, V1_TYPES);
    const destinations = (raw as { destination?: unknown })?.destination;
    if (Array.isArray(destinations) && destinations.length > MAX_BROADCAST) {
      throw new HermodError('broadcast_limit', `a broadcast takes at most ${MAX_BROADCAST} destinations, got ${destinations.length}`);
    }
    const body = validate<MessageFields & { destination: string[] }>('MessageBroadcast', raw);
    const scheduled = body.scheduled === undefined ? undefined : parseSchedule(body.scheduled, 'scheduled', deps.scheduleHorizonMs);
    // Empty is none, as GET shows a message sent without one.
    checkSenderAddress(body.source || undefined, 'source');
    checkSenderAddress(body.mask || undefined, 'mask');
    checkSmsText(body.content, 'content');
    checkLabels(body);
    await idempotent(ctx, deps.core, caller.applicationId, 'gateway_v1', async (dedupKeyOf) => {
      /** Core's refusals of the request's own fields (a claimed `source` or `mask`): the same for every destination. */
      const refusals: string[] = [];
      const replayed: boolean[] = [];
      const results = await Promise.all(
        body.destination.map(async (destination, position) => {
          if (!E164.test(destination)) return { id: null, destination, status: 'failure', message: 'destination is not a mobile number in E.164 form' };
          const problem = destinationProblem(destination);
          if (problem !== undefined) return { id: null, destination, status: 'failure', message: `destination ${problem}` };
          const r = await deps.core.send(outbound(caller, body, destination, scheduled, dedupKeyOf(position)));
          if (r.outcome?.$case === 'accepted') {
            replayed.push(r.outcome.value.replayed);
            return { id: r.outcome.value.numericId, destination, status: 'success', message: null };
          }
          if (r.outcome?.value.code === 'invalid_attrib') refusals.push(r.outcome.value.message);
          return { id: null, destination, status: 'failure', message: r.outcome?.value.message ?? 'not accepted' };
        }),
      );
      // Nothing could be sent for what the request itself says: refused as a whole (400), as a single send is.
      if (refusals.length > 0 && results.every((r) => r.status === 'failure')) throw new HermodError('invalid_attrib', refusals[0]!);
      reply(ctx, 201, results);
      markRecovered(ctx, replayed);
    });
  });

  // The broadcast's path takes POST only: asked otherwise it is not a message id to read (GET would find it
  // wrong), and its Allow is POST alone (the router's own would be the union with the message read's).
  router.all(METHOD_NOT_ALLOWED, '/messages/broadcast', async (ctx) => {
    ctx.set('Allow', 'POST');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 200;
      ctx.body = '';
      return;
    }
    throw new HermodError('method_not_allowed', 'method not allowed');
  });

  router.get('/messages/:messageid', async (ctx) => {
    const text = ctx.params.messageid ?? '';
    const caller = await deps.auth.authenticate(ctx.get('authorization'), ctx.ip);
    const numericId = parseIntegerId(text);
    if (numericId === undefined) {
      // Digits past 2^53 - 1 are a positive integer all the same: say what is wrong with them.
      if (/^[1-9][0-9]*$/.test(text))
        throw new HermodError('invalid_attrib', `messageid ${text} is above the largest message id, ${Number.MAX_SAFE_INTEGER} (2^53 − 1)`);
      throw new HermodError('invalid_attrib', 'messageid must be a positive integer');
    }
    const m = smsInterfaceMessage(await deps.core.getMessageByNumericId(caller.applicationId, numericId), text);
    reply(ctx, 200, {
      id: m.numericId,
      source: m.source,
      destination: m.destination,
      content: m.content,
      reference: m.reference,
      class: m.messageClass,
      mask: m.mask,
      sms_class: m.smsClass || undefined,
      scheduled: m.scheduled?.toISOString(),
      status: m.status,
    });
  });

  return router;
}
