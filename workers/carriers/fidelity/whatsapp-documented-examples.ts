/**
 * The WhatsApp Cloud API as Meta documents it, written out here from the
 * public references (placeholders such as PHONE_NUMBER filled in with
 * concrete values; nothing else changed).
 */

/**
 * Sending a text: `POST /{version}/{phone-number-id}/messages`, and its answer.
 * Source: https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#text-object
 * and https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-messages#text-messages
 */
export const SEND_TEXT = {
  body: { messaging_product: 'whatsapp', recipient_type: 'individual', to: '16505551234', type: 'text', text: { preview_url: false, body: 'Hello, world!' } },
  answer: {
    status: 200,
    body: {
      messaging_product: 'whatsapp',
      contacts: [{ input: '16505551234', wa_id: '16505551234' }],
      messages: [{ id: 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA' }],
    },
  },
};

/**
 * Sending an image by link.
 * Source: https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-messages#media-messages
 */
export const SEND_IMAGE = {
  body: { messaging_product: 'whatsapp', recipient_type: 'individual', to: '16505551234', type: 'image', image: { link: 'https://example.com/image.jpg' } },
};

/**
 * A Graph API error: an invalid access token (code 190), and a rate limit (code 130429, try later).
 * Source: https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
export const ERROR_BAD_TOKEN = {
  status: 401,
  body: { error: { message: 'Error validating access token: Session has expired', type: 'OAuthException', code: 190, fbtrace_id: 'AazZ1' } },
};
export const ERROR_THROUGHPUT = {
  status: 400,
  body: { error: { message: '(#130429) Rate limit hit', type: 'OAuthException', code: 130429, fbtrace_id: 'AazZ2' } },
};

const envelope = (value: Record<string, unknown>) => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '102290129340398',
      changes: [
        {
          value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' }, ...value },
          field: 'messages',
        },
      ],
    },
  ],
});

/**
 * Status webhooks: sent, delivered, read, and failed with its errors.
 * Source: https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples#message-status-updates
 */
export const STATUS_SENT = envelope({
  statuses: [
    {
      id: 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA',
      status: 'sent',
      timestamp: '1750263773',
      recipient_id: '16505551234',
      conversation: { id: 'CONVERSATION_ID', expiration_timestamp: '1750349873', origin: { type: 'utility' } },
      pricing: { billable: true, pricing_model: 'CBP', category: 'utility' },
    },
  ],
});
export const STATUS_DELIVERED = envelope({
  statuses: [
    {
      id: 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA',
      status: 'delivered',
      timestamp: '1750263774',
      recipient_id: '16505551234',
      conversation: { id: 'CONVERSATION_ID', origin: { type: 'utility' } },
      pricing: { billable: true, pricing_model: 'CBP', category: 'utility' },
    },
  ],
});
export const STATUS_READ = envelope({
  statuses: [{ id: 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA', status: 'read', timestamp: '1750263775', recipient_id: '16505551234' }],
});
export const STATUS_FAILED = envelope({
  statuses: [
    {
      id: 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA',
      status: 'failed',
      timestamp: '1750263776',
      recipient_id: '16505551234',
      errors: [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Message Undeliverable.' } }],
    },
  ],
});

/**
 * Handsets' messages: text, a reply button tapped, an image, a reaction (not a reply).
 * Source: https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples#received-messages
 * and https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components#messages-object
 */
const contacts = [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }];
export const MESSAGE_TEXT = envelope({
  contacts,
  messages: [
    {
      from: '16505551234',
      id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
      timestamp: '1749416383',
      type: 'text',
      text: { body: 'Does it come in another color?' },
    },
  ],
});
export const MESSAGE_BUTTON_REPLY = envelope({
  contacts,
  messages: [
    {
      context: { from: '15550783881', id: 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA' },
      from: '16505551234',
      id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQjJGNDk3MTVEMDNBNkQ2NDIA',
      timestamp: '1749416400',
      type: 'interactive',
      interactive: { type: 'button_reply', button_reply: { id: 'change-button', title: 'Change' } },
    },
  ],
});
export const MESSAGE_IMAGE = envelope({
  contacts,
  messages: [
    {
      from: '16505551234',
      id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzRjNFNkM1NjI1MUQzQzYyQzAA',
      timestamp: '1749416500',
      type: 'image',
      image: { caption: 'This is a caption', mime_type: 'image/jpeg', sha256: 'NIbk5rDXh+AXZbIG5X0w2ojq+vtHQ1LmXEiA8Ecg+rQ=', id: '1003383421387256' },
    },
  ],
});
export const MESSAGE_REACTION = envelope({
  contacts,
  messages: [
    {
      from: '16505551234',
      id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQ0MDRCQTA3RDYyOUE1NjhBNTcA',
      timestamp: '1749416600',
      type: 'reaction',
      reaction: { message_id: 'wamid.HBgLMTY1MDUwNzY1MjAVAgARGBI5QTNDQTVCM0Q0Q0Q2RTY3RTcA', emoji: '👍' },
    },
  ],
});
