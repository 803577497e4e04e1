import http from 'node:http';
import https from 'node:https';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/** Reads a whole answer: its text, and its JSON when it is JSON. */
export function readReply(res: http.IncomingMessage, resolve: (reply: Reply) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
  });
}

/** A small HTTPS client that trusts exactly the given CA (the service's self-signed certificate). */
export function createClient(baseUrl: string, ca?: string, auth?: { user: string; pass: string }) {
  const agent = new https.Agent({ ca, keepAlive: true, maxSockets: 64 });
  const authHeader = auth ? 'Basic ' + Buffer.from(`${auth.user}:${auth.pass}`).toString('base64') : undefined;
  const request = (method: string, path: string, options: { body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Reply> => {
    const url = new URL(path, baseUrl);
    const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const headers: Record<string, string> = {
      ...(authHeader ? { authorization: authHeader } : {}),
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    };
    const lib = url.protocol === 'https:' ? https : http;
    const send = (retry: boolean): Promise<Reply> =>
      new Promise((resolve, reject) => {
        const req = lib.request(url, { method, headers, agent: url.protocol === 'https:' ? agent : undefined }, (res) => readReply(res, resolve));
        req.on('error', (err: NodeJS.ErrnoException) => {
          // A kept-alive connection the server closed as this request went out on it (its idle timeout, 5 s): an
          // idempotent request is sent again on a new one, as HTTP clients do (Node's docs: request.reusedSocket).
          if (retry && req.reusedSocket && (method === 'GET' || method === 'HEAD') && err.code === 'ECONNRESET') resolve(send(false));
          else reject(err);
        });
        if (payload !== undefined) req.write(payload);
        req.end();
      });
    return send(true);
  };
  return {
    request,
    get: (path: string, headers?: Record<string, string>) => request('GET', path, { headers }),
    post: (path: string, body: unknown, headers?: Record<string, string>) => request('POST', path, { body, headers }),
    close: () => agent.destroy(),
  };
}

export type Client = ReturnType<typeof createClient>;
