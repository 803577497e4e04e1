import { VISIBLE_TEXT } from '../http/validator';
import { MAX_SMS_CHARACTERS } from '../../core/domain/sms-segments';
/** The request schemas of Gateway v1 (SPEC.md §2.3): requests are validated against these, and openapi.ts publishes them. */
export const MAX_BROADCAST = 1000;

/** v1's vendor media type, accepted and (when asked for) answered in. */
export const VND = 'application/vnd.modica.gateway.v1+json';

const E164 = '^\\+?[1-9][0-9]{6,14}$';

const common = {
  id: { type: 'integer', readOnly: true },
  // Empty as GET shows a message sent without one: none (SPEC sets no minimum), so a message read can be sent again.
  source: { type: 'string', maxLength: 16 },
  content: { type: 'string', minLength: 1, maxLength: MAX_SMS_CHARACTERS, pattern: VISIBLE_TEXT },
  reference: { type: 'string', maxLength: 255 },
  class: { type: 'string', minLength: 1, maxLength: 32 },
  mask: { type: 'string', maxLength: 16 },
  sms_class: { type: 'integer', minimum: 1, maximum: 3 },
  scheduled: { type: 'string', format: 'date-time' },
};

export const GATEWAY_V1_SCHEMAS = {
  Message: {
    type: 'object',
    required: ['content', 'destination'],
    properties: { ...common, destination: { type: 'string', pattern: E164 } },
  },
  MessageBroadcast: {
    type: 'object',
    required: ['content', 'destination'],
    properties: { ...common, destination: { type: 'array', minItems: 1, items: { type: 'string' } } },
  },
  Destination: { type: 'string', pattern: E164 },
} as const;
