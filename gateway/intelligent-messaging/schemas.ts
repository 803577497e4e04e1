import { VISIBLE_TEXT } from '../http/validator';
/**
 * Intelligent Messaging request schemas (SPEC.md §2.4, §8), compiled with the
 * shared ajv validator like the other interfaces.
 *
 * Objects are open (unknown fields ignored, as OpenAPI allows) except where a
 * rule depends on which keys are known: Destination and Message ("at least N
 * properties" would otherwise be met by a stray key) and DeliveryAttempt (so a
 * misspelt `timout` is an error rather than a silently default timeout, and a
 * wrapper with two labels is reported as such).
 *
 * Delivery attempts may also arrive wrapped under a label key
 * (`{"first": {"channel": "wab"}}`, COMPAT.md). That wrapper is removed before
 * validation (see message-request.ts), so the schema sees bare attempts and
 * each problem is reported once, under the label's path, instead of ajv's
 * if/then/else or anyOf noise.
 */
export const CHANNELS = ['wab', 'sms', 'mms', 'email', 'rcs'] as const;
export const MESSAGE_TYPES = ['text', 'media', 'template'] as const;
export const SCHEDULER_PIPES = ['dynamic', 'eventbridge', 'sqs'] as const;

export type Channel = (typeof CHANNELS)[number];
export type MessageType = (typeof MESSAGE_TYPES)[number];
export type SchedulerPipe = (typeof SCHEDULER_PIPES)[number];

/** SPEC.md §8 bounds the RetryAfter header to 10..1000 seconds, though a bucket refills sooner. */
export const RETRY_AFTER_MIN = 10;
export const RETRY_AFTER_MAX = 1000;

const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
/** No C0 control but tab, newline and carriage return, and no DEL (message-request.ts also refuses C1, naming it). */
const NO_CONTROLS = '^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F]*$';

export const IM_SCHEMAS = {
  // Lowercase only, as the spec says; a pattern rather than ajv's 'uuid' format, which accepts uppercase.
  Uuid: { type: 'string', minLength: 36, maxLength: 36, pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' },
  E164: { type: 'string', maxLength: 16, pattern: '^\\+[1-9][0-9]{1,14}$' },
  Email: { type: 'string', format: 'email' },
  // Anything ajv calls a URI would admit mailto: or data:; a carrier can fetch only http(s) with a host.
  Url: { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]' },
  MimeType: { type: 'string', maxLength: 255, pattern: '^\\w+/[\\w.+-]+$' },
  ShortString: { type: 'string', maxLength: 256, pattern: '^[A-Za-z0-9 _-]*$' },
  Channel: { type: 'string', enum: CHANNELS },
  MessageType: { type: 'string', enum: MESSAGE_TYPES },
  SchedulerPipe: { type: 'string', enum: SCHEDULER_PIPES },

  Destination: {
    type: 'object',
    minProperties: 1,
    additionalProperties: false,
    properties: { contact_id: ref('Uuid'), mobile: ref('E164'), email: ref('Email') },
  },
  Message: {
    type: 'object',
    required: ['type'],
    minProperties: 2,
    additionalProperties: false,
    properties: { type: ref('MessageType'), text: ref('TextMessage'), media: ref('MediaMessage'), template: ref('TemplateMessage') },
  },
  TextMessage: {
    type: 'object',
    required: ['body'],
    properties: {
      // The spec calls body a LongString, whose character set (letters, digits,
      // space, hyphen, underscore) would refuse "Hello." or "Hi, Ana": no real
      // message fits it and no client expects that. So the 10000-character
      // bound holds, the character set does not: any text but control
      // characters other than tab, newline and carriage return. At least one
      // character, since no channel can deliver an empty text.
      body: { type: 'string', minLength: 1, maxLength: 10000, allOf: [{ pattern: NO_CONTROLS }, { pattern: VISIBLE_TEXT }] },
    },
  },
  MediaMessage: {
    type: 'object',
    required: ['type', 'url'],
    properties: { type: ref('MimeType'), url: ref('Url') },
  },
  TemplateMessage: {
    type: 'object',
    required: ['template_id'],
    properties: {
      template_id: ref('Uuid'),
      language: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[A-Za-z_]+$' },
      parameters: { type: 'array', minItems: 0, maxItems: 20, items: ref('TemplateParameter') },
    },
  },
  TemplateParameter: {
    type: 'object',
    required: ['name', 'text'],
    // Parameter text fills the template's text on the handset and in the e-mail body, so it holds what a text body holds.
    properties: { name: ref('ShortString'), text: { type: 'string', maxLength: 256, pattern: NO_CONTROLS } },
  },
  DeliveryAttempt: {
    type: 'object',
    required: ['channel'],
    additionalProperties: false,
    properties: {
      channel: ref('Channel'),
      event: ref('ShortString'),
      timeout: { type: 'integer', minimum: 0, maximum: 604800 },
    },
  },
  MessagePostRequest: {
    type: 'object',
    required: ['destination', 'message'],
    properties: {
      destination: ref('Destination'),
      message: ref('Message'),
      delivery_attempts: { type: 'array', minItems: 1, maxItems: 10, items: ref('DeliveryAttempt') },
      reference: { type: 'string', maxLength: 255 },
      scheduler_pipe: ref('SchedulerPipe'),
    },
  },
} as const;

/** A request that passed MessagePostRequest, its attempts unwrapped. */
export interface MessagePostRequest {
  destination: { contact_id?: string; mobile?: string; email?: string };
  message: {
    type: MessageType;
    text?: { body: string };
    media?: { type: string; url: string };
    template?: { template_id: string; language?: string; parameters?: { name: string; text: string }[] };
  };
  delivery_attempts?: DeliveryAttempt[];
  reference?: string;
  scheduler_pipe?: SchedulerPipe;
}

export interface DeliveryAttempt {
  channel: Channel;
  event?: string;
  timeout?: number;
}
