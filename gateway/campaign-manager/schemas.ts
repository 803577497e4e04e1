import { VISIBLE_TEXT } from '../http/validator';
import { MAX_SMS_CHARACTERS } from '../../core/domain/sms-segments';
import { MEMBER_DESTINATION_PATTERN } from '../../core/domain/member-destination';
/**
 * Campaign Manager request schemas (SPEC.md §2.1, §8), compiled with ajv like
 * the other interfaces. `members` is streamed, so each member is checked on
 * its own against Member, and the body's other fields against the *Fields
 * schemas once the whole body has been read.
 */
const param = { type: 'string', minLength: 1, maxLength: 50 };
const common = {
  name: { type: 'string', minLength: 1, maxLength: 50 },
  batch: { type: 'string', minLength: 1, maxLength: 255 },
  // An address: something, @, something (the shortest, a@b, is 3 characters).
  email: { type: 'string', pattern: '^[^\\s@]+@[^\\s@]+$', minLength: 3, maxLength: 254 },
  remove_opt_outs: { type: 'boolean' },
  strict_validation: { type: 'boolean' },
};

export const CAMPAIGN_MANAGER_SCHEMAS = {
  Member: {
    type: 'object',
    required: ['destination'],
    properties: {
      // A mobile number: international with + (no country code starts with 0), or national digits the carrier routes.
      destination: { type: 'string', minLength: 1, pattern: MEMBER_DESTINATION_PATTERN },
      param1: param,
      param2: param,
      param3: param,
      param4: param,
      param5: param,
      param6: param,
    },
  },
  ListRequestFields: {
    type: 'object',
    required: ['name'],
    properties: common,
  },
  ScheduleCampaignRequestFields: {
    type: 'object',
    required: ['name', 'schedule'],
    properties: {
      ...common,
      schedule: { type: 'string', format: 'date-time' },
      content: { type: 'string', minLength: 1, maxLength: MAX_SMS_CHARACTERS, pattern: VISIBLE_TEXT },
      mask: { type: 'string', minLength: 1, maxLength: 11 },
      opt_out_response: { type: 'string', minLength: 1, maxLength: 160, pattern: VISIBLE_TEXT },
      reply_response: { type: 'string', minLength: 1, maxLength: 160, pattern: VISIBLE_TEXT },
      template: { type: 'string', minLength: 1 },
    },
  },
  DeleteMultipleListsRequest: {
    type: 'object',
    required: ['list_ids'],
    properties: {
      list_ids: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
    },
  },
};

/** `{application_name}` in every path but /healthz (SPEC.md §4). */
export const MAX_APPLICATION_NAME = 255;
