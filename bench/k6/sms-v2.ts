// SMS Gateway v2: POST /rest/sms/v2/messages at a constant arrival rate.
//   k6 run -e HERMOD_URL=https://host:8443 -e HERMOD_USER=app -e HERMOD_PASS=pw -e RATE=2000 bench/k6/sms-v2.ts
import http from 'k6/http';
import { check } from 'k6';
import { BASE_URL, basicAuth, destination, openModel } from './common.ts';

export const options = openModel(25, 50);

export default function (): void {
  const to = destination();
  const res = http.post(`${BASE_URL}/rest/sms/v2/messages`, JSON.stringify({ destination: to, content: 'k6 load test' }), {
    headers: { 'content-type': 'application/json', authorization: basicAuth() },
    tags: { interface: 'sms_v2' },
  });
  check(res, {
    'answered 202': (r) => r.status === 202,
    'status accepted': (r) => (r.json('status') as string) === 'accepted',
    'detail is the destination': (r) => (r.json('detail') as string) === to,
  });
}
