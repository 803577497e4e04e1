import { VISIBLE_TEXT } from '../http/validator';
import { MAX_SMS_CHARACTERS } from '../../core/domain/sms-segments';
/** The request schemas of SMS Gateway v2 (SPEC.md §2.2): requests are validated against these, and openapi.ts publishes them. */
export const SMS_V2_SCHEMAS = {
  Uuid: { type: 'string', format: 'uuid' },
  SingleMessage: {
    type: 'object',
    required: ['destination', 'content'],
    properties: {
      id: { $ref: '#/$defs/Uuid', readOnly: true },
      destination: { type: 'string', pattern: '^\\+?[1-9][0-9]{6,14}$', description: 'Mobile number in E.164 form' },
      content: { type: 'string', minLength: 1, maxLength: MAX_SMS_CHARACTERS, pattern: VISIBLE_TEXT },
      source: { type: 'string', minLength: 1, maxLength: 16 },
      reference: { type: 'string', maxLength: 255 },
      class: { type: 'string', maxLength: 32 },
      mask: { type: 'string', minLength: 1, maxLength: 16 },
      // 1 to 3, as on Gateway v1 (COMPAT.md); 0 was taken and stored as if none were given.
      sms_class: { type: 'integer', minimum: 1, maximum: 3 },
      scheduled: { type: 'string', format: 'date-time' },
      integration_id: { $ref: '#/$defs/Uuid' },
    },
  },
} as const;
