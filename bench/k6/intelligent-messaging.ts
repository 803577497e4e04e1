// Intelligent Messaging: POST /rest/im/v1/message with a wab → sms fallback.
//   k6 run -e HERMOD_URL=https://host:8443 -e HERMOD_API_KEY=key -e RATE=1000 bench/k6/intelligent-messaging.ts
import http from 'k6/http';
import { check } from 'k6';
import { BASE_URL, destination, idempotencyKey, openModel, text } from './common.ts';

export const options = openModel(50, 100);
const apiKey = __ENV.HERMOD_API_KEY || 'change-me';

export default function (): void {
  const body = {
    destination: { mobile: destination() },
    message: { type: 'text', text: { body: text() } },
    delivery_attempts: [{ first: { channel: 'wab', event: 'read', timeout: 15 } }, { last: { channel: 'sms' } }],
    reference: 'k6',
  };
  const res = http.post(`${BASE_URL}/rest/im/v1/message`, JSON.stringify(body), {
    headers: { 'content-type': 'application/json', authorization: apiKey, 'idempotency-key': idempotencyKey() },
    tags: { interface: 'im_v1' },
  });
  check(res, { 'answered 202': (r) => r.status === 202, 'has an id': (r) => typeof r.json('id') === 'string' });
}
