/**
 * The MMS contract's documented examples (the comments of mms-carrier.ts and
 * lib/carrier-webhooks/mms-webhook.ts are its reference), written out as a
 * provider's API reference shows them, for replaying against the adapter, the
 * simulator and the webhook parser.
 */

/** Send request: `POST {baseUrl}/v1/mms` with a bearer token. */
export const SEND_REQUEST = {
  from: '+15550000000',
  to: '+64211234561',
  subject: 'Tō tīkiti — ваш билет 🎫',
  text: 'Kia ora, e hoa mā — 见附件 👋🏽',
  media: [{ url: 'https://cdn.example.com/a.jpg', content_type: 'image/jpeg' }],
  client_ref: 'msg-0f8fad5b-d9cb-469f-a165-70867728950e',
};

/** Lookup answer: `GET {baseUrl}/v1/mms?client_ref=…`, one message taken with that reference. */
export const LOOKUP_ANSWER = { messages: [{ id: '3f9a1c2b7e4d5a6b8c9d0e1f', client_ref: SEND_REQUEST.client_ref, to: SEND_REQUEST.to }] };

/** Error answer, any 4xx/5xx. */
export const ERROR_ANSWER = { error: { code: 'invalid_request', message: 'to must be an E.164 number' } };

/** Delivery reports, each signed `X-Signature: sha256=<hex HMAC-SHA256 of the body>`; a JSON array of them is taken too. */
export const DELIVERY_REPORTS = [
  { id: '3f9a1c2b7e4d5a6b8c9d0e1f', status: 'sent', timestamp: '2026-11-24T10:15:01Z' },
  { id: '3f9a1c2b7e4d5a6b8c9d0e1f', status: 'delivered', timestamp: '2026-11-24T10:15:03.250Z' },
  { id: '7b6a5c4d3e2f1a0b9c8d7e6f', status: 'failed', timestamp: '2026-11-24T10:15:04Z', error_code: 'unreachable' },
  { id: '0a1b2c3d4e5f6a7b8c9d0e1f', status: 'expired', timestamp: '2026-11-24T10:20:00Z', error_code: 4005 },
];
