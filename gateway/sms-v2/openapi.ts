/**
 * The OpenAPI document of SMS Gateway v2 as hermod implements it. Its schemas
 * are what requests are validated against, and it is what GET /openapi.yaml serves.
 */
const STATUSES = ['accepted', 'queued', 'submitted', 'sent', 'received', 'blocked', 'deficient', 'frozen', 'rejected', 'failed', 'dead', 'expired'];

export const SMS_V2_SCHEMAS = {
  Uuid: { type: 'string', format: 'uuid' },
  SingleMessage: {
    type: 'object',
    required: ['destination', 'content'],
    properties: {
      id: { $ref: '#/$defs/Uuid', readOnly: true },
      destination: { type: 'string', pattern: '^\\+?[1-9][0-9]{6,14}$', description: 'Mobile number in E.164 form' },
      content: { type: 'string', minLength: 1, maxLength: 1600 },
      source: { type: 'string', minLength: 1, maxLength: 16 },
      reference: { type: 'string', maxLength: 255 },
      class: { type: 'string', maxLength: 32 },
      mask: { type: 'string', minLength: 1, maxLength: 11 },
      sms_class: { type: 'integer', minimum: 0, maximum: 3 },
      scheduled: { type: 'string', format: 'date-time' },
      integration_id: { $ref: '#/$defs/Uuid' },
    },
  },
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
  Error: {
    type: 'object',
    required: ['message', 'statusCode', 'error'],
    properties: {
      message: { type: 'string' },
      statusCode: { type: 'integer', format: 'int32' },
      error: { type: 'string' },
    },
  },
} as const;

// OpenAPI refers to components where the validator uses $defs.
const asComponents = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll('#/$defs/', '#/components/schemas/'));

export const SMS_V2_OPENAPI = {
  openapi: '3.1.0',
  info: { title: 'SMS Gateway v2 (hermod)', version: '1.0.0' },
  servers: [{ url: '/rest/sms/v2' }],
  components: {
    securitySchemes: { basic: { type: 'http', scheme: 'basic' } },
    schemas: asComponents(SMS_V2_SCHEMAS),
  },
  security: [{ basic: [] }],
  paths: {
    '/messages': {
      post: {
        summary: 'Send one SMS',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/SingleMessage' } } } },
        responses: {
          '202': { description: 'Accepted', content: { 'application/json': { schema: { $ref: '#/components/schemas/StatusCallback' } } } },
          default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
      get: {
        summary: 'Read one message',
        parameters: [{ name: 'id', in: 'query', required: true, schema: { $ref: '#/components/schemas/Uuid' } }],
        responses: {
          '200': { description: 'The message', content: { 'application/json': { schema: { $ref: '#/components/schemas/MessageDetails' } } } },
          default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
    },
  },
};
