import { content, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, LOCATION, openApiDocument, ref, response, textBody, WWW_AUTHENTICATE } from '../http/openapi';
import { CAMPAIGN_MANAGER_ERROR_SCHEMAS } from './error-body';
import { MAX_MEMBERS } from './import-body';
import { CAMPAIGN_MANAGER_SCHEMAS, MAX_APPLICATION_NAME } from './schemas';

/**
 * The OpenAPI document of Campaign Manager, served at
 * /rest/campaign_manager/v1/openapi.yaml. A list or campaign body is
 * validated in two parts as it streams (each member against Member, the
 * other fields against *Fields once the body ends); the published request
 * bodies put those same schemas together.
 */
const id = { type: 'integer', format: 'int64', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const members = {
  type: 'object',
  required: ['members'],
  properties: { members: { type: 'array', minItems: 1, maxItems: MAX_MEMBERS, items: { $ref: '#/$defs/Member' } } },
};
const created = {
  type: 'object',
  required: ['id'],
  properties: {
    id,
    error_messages: { type: 'string', description: 'How many invalid members were dropped and why (strict_validation false)' },
  },
};

/** Request bodies made of the validator's schemas, and the answers (SPEC.md §2.1). */
const BODY_AND_RESPONSE_SCHEMAS = {
  ListRequest: { allOf: [{ $ref: '#/$defs/ListRequestFields' }, members] },
  ScheduleCampaignRequest: { allOf: [{ $ref: '#/$defs/ScheduleCampaignRequestFields' }, members] },
  ListCreateResponse: created,
  ScheduleCampaignResponse: created,
  List: {
    type: 'object',
    required: ['id', 'name', 'created', 'members'],
    properties: {
      id,
      name: { type: 'string' },
      created: { type: 'string', format: 'date-time' },
      members: { type: 'array', items: { $ref: '#/$defs/Member' } },
    },
  },
  DeleteMultipleListsResponse: {
    type: 'object',
    required: ['list_ids', 'message'],
    properties: { list_ids: { type: 'array', items: id, description: 'Ids of the lists that were deleted' }, message: { type: 'string' } },
  },
  Template: { type: 'object', required: ['id', 'name'], properties: { id, name: { type: 'string' } } },
  CampaignReport: {
    type: 'array',
    items: {
      type: 'object',
      required: ['list_name', 'message_id', 'mobile', 'sent_date', 'status', 'status_date', 'timezone'],
      properties: {
        list_name: { type: 'string' },
        message_id: { type: 'integer', format: 'int64' },
        mobile: { type: 'string' },
        sent_date: { type: 'string', description: "RFC 3339 at the campaign's UTC offset; empty until sent" },
        status: { type: 'string' },
        status_date: { type: 'string', format: 'date-time', description: "At the campaign's UTC offset" },
        timezone: { type: 'string', pattern: '^[+-][0-9]{2}:[0-9]{2}$', description: "The campaign's UTC offset" },
      },
    },
  },
};

const applicationName = { name: 'application_name', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: MAX_APPLICATION_NAME } };
const pathId = (name: string) => ({ name, in: 'path', required: true, schema: id });

const unauthorized = (body: Record<string, unknown>) => response('Missing or wrong credentials', body, { 'WWW-Authenticate': WWW_AUTHENTICATE });
/** Most operations answer errors as DefaultError; delete list, delete multiple lists (and healthz) as plain text. */
const jsonErrors = {
  '401': unauthorized(content(ref('DefaultError'))),
  default: response('Error (validation failures are 422)', content(ref('DefaultError'))),
};
const plainErrors = { '401': unauthorized(content(ref('PlainError'), ['text/plain'])), default: response('Error', content(ref('PlainError'), ['text/plain'])) };

const importing = (summary: string, operationId: string, body: string, answer: string, location: string) => ({
  summary,
  operationId,
  parameters: [applicationName, IDEMPOTENCY_KEY],
  requestBody: { required: true, ...content(ref(body)) },
  responses: {
    '201': response('Created', content(ref(answer)), { Location: { ...LOCATION, description: location }, 'Idempotent-Replayed': IDEMPOTENT_REPLAYED }),
    ...jsonErrors,
  },
});

export const CAMPAIGN_MANAGER_OPENAPI = openApiDocument({
  title: 'Campaign Manager (hermod)',
  version: '1.0.1',
  server: '/rest/campaign_manager/v1',
  securitySchemes: { basic: { type: 'http', scheme: 'basic' } },
  security: [{ basic: [] }],
  schemas: [CAMPAIGN_MANAGER_SCHEMAS, BODY_AND_RESPONSE_SCHEMAS, CAMPAIGN_MANAGER_ERROR_SCHEMAS],
  paths: {
    '/healthz': {
      get: {
        summary: 'Whether the service is up',
        operationId: 'healthz',
        security: [],
        responses: { '200': response('Up', textBody()), '500': response('Down, and why', textBody()) },
      },
    },
    '/{application_name}/lists': {
      get: {
        summary: "The application's lists and their members",
        operationId: 'getLists',
        parameters: [applicationName],
        responses: { '200': response('The lists', content({ type: 'array', items: ref('List') })), ...jsonErrors },
      },
      post: importing('Create a list', 'createList', 'ListRequest', 'ListCreateResponse', 'URL of the new list'),
    },
    '/{application_name}/lists/{list_id}': {
      get: {
        summary: 'A list and its members (the Location of a new list)',
        operationId: 'getList',
        parameters: [applicationName, pathId('list_id')],
        responses: { '200': response('The list', content(ref('List'))), ...jsonErrors },
      },
      delete: {
        summary: 'Delete a list',
        operationId: 'deleteList',
        parameters: [applicationName, pathId('list_id')],
        responses: { '204': response('Deleted'), ...plainErrors },
      },
    },
    '/{application_name}/delete_multiple_lists': {
      post: {
        summary: 'Delete lists',
        operationId: 'deleteMultipleLists',
        parameters: [applicationName],
        requestBody: { required: true, ...content(ref('DeleteMultipleListsRequest')) },
        responses: { '200': response('Some or all of the lists were deleted', content(ref('DeleteMultipleListsResponse'))), ...plainErrors },
      },
    },
    '/{application_name}/scheduled_campaigns': {
      post: importing('Schedule a campaign', 'scheduleCampaign', 'ScheduleCampaignRequest', 'ScheduleCampaignResponse', "URL of the new campaign's report"),
    },
    '/{application_name}/templates': {
      get: {
        summary: "The application's message templates",
        operationId: 'getTemplates',
        parameters: [applicationName],
        responses: { '200': response('The templates', content({ type: 'array', items: ref('Template') })), ...jsonErrors },
      },
    },
    '/{application_name}/{campaign_id}/report': {
      get: {
        summary: 'The status of each message of a campaign',
        operationId: 'getCampaignReport',
        parameters: [applicationName, pathId('campaign_id')],
        responses: { '200': response('The report', content(ref('CampaignReport'))), ...jsonErrors },
      },
    },
  },
});
