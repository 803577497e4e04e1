import http from 'node:http';
import https from 'node:https';

/** POSTs a JSON body once and reads the answer's status and text; self-signed certificates are accepted (a simulator). */
export function postForAnswer(target: string, body: Buffer, headers: Record<string, string> = {}, timeoutMs = 5000): Promise<{ status: number; body: string }> {
  const url = new URL(target);
  const secure = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': body.length, ...headers },
      timeout: timeoutMs,
      ...(secure ? { rejectUnauthorized: false } : {}),
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
