import { content, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, openApiDocument, ref, response, WWW_AUTHENTICATE } from '../http/openapi';
import { SMS_V2_ERROR_SCHEMAS } from './error-body';
import { SMS_V2_SCHEMAS } from './schemas';

/** The OpenAPI document of SMS Gateway v2, served at /rest/sms/v2/openapi.yaml: its request schemas are the validator's own. */
const STATUSES = ['accepted', 'queued', 'submitted', 'sent', 'received', 'blocked', 'deficient', 'frozen', 'rejected', 'failed', 'dead', 'expired'];

/** The answers (SPEC.md §2.2); written by routes.ts, never validated. */
const RESPONSE_SCHEMAS = {
  StatusCallback: {
    type: 'object',
    properties: {
      id: { $ref: '#/$defs/Uuid' },
      status: { type: 'string', enum: STATUSES },
      detail: { type: 'string' },
    },
  },
  MessageDetails: {
    type: 'object',
    properties: {
      id: { $ref: '#/$defs/Uuid' },
      source: { type: 'string' },
      destination: { type: 'string' },
      direction: { type: 'string', enum: ['MO', 'MT'] },
      reference: { type: 'string' },
      content: { type: 'string' },
      status: { type: 'string', enum: STATUSES },
    },
  },
};

const errors = {
  '401': response('Missing or wrong credentials', content(ref('Error')), { 'WWW-Authenticate': WWW_AUTHENTICATE }),
  default: response('Error', content(ref('Error'))),
};

export const SMS_V2_OPENAPI = openApiDocument({
  title: 'SMS Gateway v2 (hermod)',
  version: '1.0.0',
  server: '/rest/sms/v2',
  securitySchemes: { basic: { type: 'http', scheme: 'basic' } },
  security: [{ basic: [] }],
  schemas: [SMS_V2_SCHEMAS, RESPONSE_SCHEMAS, SMS_V2_ERROR_SCHEMAS],
  paths: {
    '/messages': {
      post: {
        summary: 'Send one SMS',
        operationId: 'sendMessage',
        parameters: [IDEMPOTENCY_KEY],
        requestBody: { required: true, ...content(ref('SingleMessage')) },
        responses: {
          '202': response('Accepted', content(ref('StatusCallback')), { 'Idempotent-Replayed': IDEMPOTENT_REPLAYED }),
          ...errors,
        },
      },
      get: {
        summary: 'Read one message',
        operationId: 'getMessage',
        parameters: [{ name: 'id', in: 'query', required: true, schema: ref('Uuid') }],
        responses: { '200': response('The message', content(ref('MessageDetails'))), ...errors },
      },
    },
  },
});
