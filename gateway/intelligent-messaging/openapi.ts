import { STATUS_CODES } from 'node:http';
import { ERROR_CODES, type ErrorCode } from '../../lib/errors';
import { content, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, openApiDocument, ref, response, WWW_AUTHENTICATE } from '../http/openapi';
import { INTELLIGENT_MESSAGING_ERROR_SCHEMAS, intelligentMessagingHttpStatus } from './error-body';
import { IM_SCHEMAS, RETRY_AFTER_MAX, RETRY_AFTER_MIN } from './schemas';

/** The OpenAPI document of Intelligent Messaging, served at /rest/im/v1/openapi.yaml: its request schemas are the validator's own. */
const RESPONSE_SCHEMAS = {
  MessagePostResponse: { type: 'object', required: ['id'], properties: { id: { $ref: '#/$defs/Uuid' } } },
};

const wait = { type: 'integer', minimum: RETRY_AFTER_MIN, maximum: RETRY_AFTER_MAX };
const RATE_LIMIT = { description: "The application's requests per second (absent when it has none)", schema: { type: 'integer', minimum: 0, maximum: 100 } };
const HEADERS: Record<number, Record<string, Record<string, unknown>>> = {
  401: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  429: {
    RetryAfter: { description: 'Seconds before a follow-up request', schema: wait },
    'Retry-After': { description: 'The same, for generic HTTP clients', schema: wait },
    'X-RateLimit-Limit': RATE_LIMIT,
  },
};

/** Every status the error renderer can answer, each with an APIError body. */
const statuses = [...new Set((Object.keys(ERROR_CODES) as ErrorCode[]).map(intelligentMessagingHttpStatus))].sort((a, b) => a - b);
const errors = Object.fromEntries(
  statuses.map((status) => [String(status), response(STATUS_CODES[status] ?? 'Error', content(ref('APIError')), HEADERS[status])]),
);

export const INTELLIGENT_MESSAGING_OPENAPI = openApiDocument({
  title: 'Intelligent Messaging (hermod)',
  version: '0.0.1',
  server: '/rest/im/v1',
  securitySchemes: {
    apiKey: { type: 'apiKey', in: 'header', name: 'authorization', description: 'The key, bare or after Bearer or ApiKey' },
    basic: { type: 'http', scheme: 'basic' },
  },
  security: [{ apiKey: [] }, { basic: [] }],
  schemas: [IM_SCHEMAS, RESPONSE_SCHEMAS, INTELLIGENT_MESSAGING_ERROR_SCHEMAS],
  paths: {
    '/message': {
      post: {
        summary: 'Send one message over a sequence of channels',
        operationId: 'postMessage',
        tags: ['messages'],
        description:
          'Each delivery attempt may also come wrapped under a label key, e.g. {"first": {"channel": "wab"}}; ' +
          'the wrapper is removed before the body is checked against MessagePostRequest, and problems are reported under the label.',
        parameters: [IDEMPOTENCY_KEY],
        requestBody: { required: true, ...content(ref('MessagePostRequest')) },
        responses: {
          '202': response('Accepted', content(ref('MessagePostResponse')), { 'X-RateLimit-Limit': RATE_LIMIT, 'Idempotent-Replayed': IDEMPOTENT_REPLAYED }),
          ...errors,
        },
      },
    },
  },
});
