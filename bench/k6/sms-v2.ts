// SMS Gateway v2: POST /rest/sms/v2/messages at a constant arrival rate.
//   k6 run -e HERMOD_URL=https://host:8443 -e HERMOD_USER=app -e HERMOD_PASS=pw -e RATE=2000 bench/k6/sms-v2.ts
import http from 'k6/http';
import { check } from 'k6';
import { BASE_URL, basicAuth, destination, idempotencyKey, openModel, RETRY_SHARE, text } from './common.ts';

export const options = openModel(25, 50);

export default function (): void {
  const to = destination();
  const body = JSON.stringify({ destination: to, content: text() });
  const params = {
    headers: { 'content-type': 'application/json', authorization: basicAuth(), 'idempotency-key': idempotencyKey() },
    tags: { interface: 'sms_v2' },
  };
  const res = http.post(`${BASE_URL}/rest/sms/v2/messages`, body, params);
  check(res, {
    'answered 202': (r) => r.status === 202,
    'status accepted': (r) => (r.json('status') as string) === 'accepted',
    'detail is the destination': (r) => (r.json('detail') as string) === to,
  });
  if (res.status !== 202 || Math.random() >= RETRY_SHARE) return;
  // The same request again, as a client that lost the answer: the same message, said to be a replay.
  const again = http.post(`${BASE_URL}/rest/sms/v2/messages`, body, { ...params, tags: { interface: 'sms_v2', op: 'retry' } });
  check(again, {
    'a retry is answered 202 with the same id': (r) => r.status === 202 && r.json('id') === res.json('id'),
    'a retry is said to be a replay': (r) => r.headers['Idempotent-Replayed'] === 'true',
  });
}
