import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';

/** A hermod to talk to: base URL, Basic authorization header, app name and TLS agent. */
export interface Service {
  url: string;
  auth: string;
  app: string;
  agent: https.Agent;
}

/** One HTTPS request to the service, `body` piped in when given; resolves with the response, unread. */
export function serviceRequest(s: Service, method: string, urlPath: string, body?: Readable): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: s.auth, ...(body ? { 'content-type': 'application/json' } : {}) };
    const req = https.request(new URL(urlPath, s.url), { method, headers, agent: s.agent }, resolve);
    req.on('error', reject);
    if (body) {
      body.on('error', reject);
      body.pipe(req);
    } else req.end();
  });
}

export async function readText(res: IncomingMessage): Promise<string> {
  let out = '';
  for await (const chunk of res) out += (chunk as Buffer).toString('utf8');
  return out;
}
