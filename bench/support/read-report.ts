import { readText, serviceRequest, type Service } from './service-request';

/**
 * Reads the campaign's report as it streams, counting rows (`"message_id"`)
 * and statuses without keeping the body.
 */
export async function readReport(s: Service, campaignId: number, progress: { rows: number }): Promise<{ rows: number; statuses: Map<string, number> }> {
  const res = await serviceRequest(s, 'GET', `/rest/campaign_manager/v1/${encodeURIComponent(s.app)}/${campaignId}/report`);
  if (res.statusCode !== 200) throw new Error(`GET report answered ${res.statusCode}: ${(await readText(res)).slice(0, 500)}`);
  const statuses = new Map<string, number>();
  const count = (t: string): void => {
    for (let at = t.indexOf('"message_id"'); at !== -1; at = t.indexOf('"message_id"', at + 12)) progress.rows++;
    for (const m of t.matchAll(/"status":"([a-z]+)"/g)) statuses.set(m[1]!, (statuses.get(m[1]!) ?? 0) + 1);
  };
  // Rows are counted up to the last complete one in hand; the rest waits for the next chunk.
  let carry = '';
  for await (const chunk of res) {
    const t = carry + (chunk as Buffer).toString('latin1');
    const cut = t.lastIndexOf('},');
    if (cut === -1) {
      carry = t;
      continue;
    }
    count(t.slice(0, cut));
    carry = t.slice(cut);
  }
  count(carry);
  return { rows: progress.rows, statuses };
}
