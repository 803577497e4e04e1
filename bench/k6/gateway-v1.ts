// Gateway v1: POST /rest/gateway/messages (and a broadcast every 100th iteration).
//   k6 run -e HERMOD_URL=https://host:8443 -e HERMOD_USER=app -e HERMOD_PASS=pw -e RATE=2000 bench/k6/gateway-v1.ts
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { BASE_URL, basicAuth, destination, idempotencyKey, openModel, text } from './common.ts';

export const options = openModel(25, 50);
const headers = { 'content-type': 'application/vnd.modica.gateway.v1+json', accept: 'application/vnd.modica.gateway.v1+json', authorization: basicAuth() };

export default function (): void {
  if (exec.scenario.iterationInTest % 100 === 99) {
    const to = Array.from({ length: 100 }, destination);
    const res = http.post(`${BASE_URL}/rest/gateway/messages/broadcast`, JSON.stringify({ destination: to, content: text() }), {
      headers,
      tags: { interface: 'gateway_v1', op: 'broadcast' },
    });
    check(res, { 'broadcast answered 201': (r) => r.status === 201, 'one result per destination': (r) => (r.json() as unknown[]).length === to.length });
    return;
  }
  const res = http.post(`${BASE_URL}/rest/gateway/messages`, JSON.stringify({ destination: destination(), content: text() }), {
    headers: { ...headers, 'idempotency-key': idempotencyKey() },
    tags: { interface: 'gateway_v1', op: 'send' },
  });
  check(res, { 'answered 201': (r) => r.status === 201, 'a bare array with one id': (r) => (r.json() as number[]).length === 1 });
}
