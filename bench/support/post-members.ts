import { membersBody } from './members-body';
import { readText, serviceRequest, type Service } from './service-request';

/** POSTs `head` with `count` generated members to the campaign manager's `what` (lists, scheduled_campaigns); returns the new id. */
export async function postMembers(s: Service, what: string, head: Record<string, unknown>, count: number, progress: { generated: number }): Promise<number> {
  const res = await serviceRequest(s, 'POST', `/rest/campaign_manager/v1/${encodeURIComponent(s.app)}/${what}`, membersBody(head, count, progress));
  const answer = await readText(res);
  if (res.statusCode !== 201) throw new Error(`POST ${what} answered ${res.statusCode}: ${answer.slice(0, 500)}`);
  return (JSON.parse(answer) as { id: number }).id;
}
