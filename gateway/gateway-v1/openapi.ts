import { content, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, openApiDocument, ref, response, WWW_AUTHENTICATE } from '../http/openapi';
import { GATEWAY_V1_ERROR_SCHEMAS } from './error-body';
import { GATEWAY_V1_SCHEMAS, MAX_BROADCAST, VND } from './schemas';

/** The OpenAPI document of Gateway v1, served at /rest/gateway/openapi.yaml: its request schemas are the validator's own. */
const id = { type: 'integer', format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };

/** The answers (SPEC.md §2.3); written by routes.ts, never validated. */
const RESPONSE_SCHEMAS = {
  RestResponse: { type: 'array', minItems: 1, maxItems: 1, items: id, description: 'The id of the new message' },
  BroadcastRestResponse: {
    type: 'array',
    description: 'One result per destination, in request order',
    items: {
      type: 'object',
      required: ['id', 'destination', 'status', 'message'],
      properties: {
        id: { oneOf: [id, { type: 'null' }] },
        destination: { type: 'string' },
        status: { type: 'string', enum: ['success', 'failure'] },
        message: { type: ['string', 'null'], description: 'Why the destination failed' },
      },
    },
  },
  MessageResponse: {
    type: 'object',
    properties: {
      id,
      source: { type: 'string' },
      destination: { type: 'string' },
      content: { type: 'string' },
      reference: { type: 'string' },
      class: { type: 'string' },
      mask: { type: 'string' },
      sms_class: { type: 'integer' },
      scheduled: { type: 'string', format: 'date-time' },
      status: { type: 'string' },
    },
  },
};

/** Answers come in the vendor media type when the client accepts it, JSON otherwise; errors are always JSON. */
const MEDIA = ['application/json', VND];

const errors = {
  '401': response('Missing or wrong credentials', content(ref('DefaultError')), { 'WWW-Authenticate': WWW_AUTHENTICATE }),
  default: response('Error', content(ref('DefaultError'))),
};

const send = (summary: string, operationId: string, body: string, answer: string) => ({
  summary,
  operationId,
  parameters: [IDEMPOTENCY_KEY],
  requestBody: { required: true, ...content(ref(body), MEDIA) },
  responses: { '201': response('Sent', content(ref(answer), MEDIA), { 'Idempotent-Replayed': IDEMPOTENT_REPLAYED }), ...errors },
});

export const GATEWAY_V1_OPENAPI = openApiDocument({
  title: 'Gateway v1 (hermod)',
  version: '1.0.0',
  server: '/rest/gateway',
  securitySchemes: { basic: { type: 'http', scheme: 'basic' } },
  security: [{ basic: [] }],
  schemas: [GATEWAY_V1_SCHEMAS, RESPONSE_SCHEMAS, GATEWAY_V1_ERROR_SCHEMAS],
  paths: {
    '/messages': { post: send('Send one SMS', 'sendMessage', 'Message', 'RestResponse') },
    '/messages/broadcast': {
      post: {
        ...send(`Send one SMS to up to ${MAX_BROADCAST} destinations`, 'broadcastMessage', 'MessageBroadcast', 'BroadcastRestResponse'),
        description: `More than ${MAX_BROADCAST} destinations is refused (broadcast_limit); a destination that is not a mobile number fails alone.`,
      },
    },
    '/messages/{messageid}': {
      get: {
        summary: 'Read one message',
        operationId: 'getMessage',
        parameters: [{ name: 'messageid', in: 'path', required: true, schema: id }],
        responses: { '200': response('The message', content(ref('MessageResponse'), MEDIA)), ...errors },
      },
    },
  },
});
