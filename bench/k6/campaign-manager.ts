// Campaign Manager: creates lists of LIST_SIZE members and schedules campaigns to them;
// reads lists and templates in between. RATE defaults to 5 iterations a second (each imports
// LIST_SIZE members twice). The campaigns are scheduled SEND_AFTER seconds ahead (default
// 30 days: the run measures import and scheduling, and sends nothing during it); SEND_AFTER=60 has
// each campaign send its LIST_SIZE messages a minute later, after the run's own figures. The API has
// no cancel: every campaign stays scheduled and sends on its day unless cancelled after the run
// (README, "Load tests with k6": `hermod campaigns cancel` for each `k6-` campaign).
//   k6 run -e HERMOD_URL=https://host:8443 -e HERMOD_USER=app -e HERMOD_PASS=pw -e RATE=5 -e LIST_SIZE=1000 bench/k6/campaign-manager.ts
import http from 'k6/http';
import { check } from 'k6';
import { BASE_URL, basicAuth, destination, openModel, rateOr } from './common.ts';

export const options = openModel(2000, 5000, rateOr(5));
const sendAfterMs = Number(__ENV.SEND_AFTER || 30 * 24 * 3600) * 1000;
const app = __ENV.HERMOD_USER || 'acme';
const listSize = Number(__ENV.LIST_SIZE || 1000);
const prefix = `${BASE_URL}/rest/campaign_manager/v1/${encodeURIComponent(app)}`;
const headers = { 'content-type': 'application/json', authorization: basicAuth() };

export default function (): void {
  const members = Array.from({ length: listSize }, (_, i) => ({ destination: destination(), param1: `member ${i}` }));
  const list = http.post(`${prefix}/lists`, JSON.stringify({ name: `k6-${Date.now()}`, members }), {
    headers,
    tags: { interface: 'campaign_manager', op: 'create_list' },
  });
  check(list, { 'list created 201': (r) => r.status === 201, 'list has an id': (r) => typeof r.json('id') === 'number' });

  const campaign = http.post(
    `${prefix}/scheduled_campaigns`,
    JSON.stringify({ name: `k6-${Date.now()}`, schedule: new Date(Date.now() + sendAfterMs).toISOString(), members, content: 'Hello {{param1}}' }),
    { headers, tags: { interface: 'campaign_manager', op: 'schedule' } },
  );
  check(campaign, { 'campaign scheduled 201': (r) => r.status === 201 });

  const templates = http.get(`${prefix}/templates`, { headers, tags: { interface: 'campaign_manager', op: 'templates' } });
  check(templates, { 'templates 200': (r) => r.status === 200 });
}
