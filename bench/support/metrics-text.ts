/**
 * The text of a hermod /metrics, with the bearer token of HERMOD_METRICS_TOKEN
 * when the environment sets one (the service the bench starts inherits it);
 * a refusal is an error, not an empty scrape that reads as zeros.
 */
export async function metricsText(url: string): Promise<string> {
  const token = process.env.HERMOD_METRICS_TOKEN;
  const res = await fetch(url, { signal: AbortSignal.timeout(5000), ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.text();
}
