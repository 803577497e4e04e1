import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../gateway-test-kit';

const ACME = { ok: true, application: { id: 'app-1', name: 'acme', password: '', apiKey: '' } };
const BASIC = `Basic ${Buffer.from('acme:secret').toString('base64')}`;

interface Answer {
  status: number;
  connection: string | undefined;
  body: string;
}

/** One request on the agent's connection; a body given as chunks goes chunked, with no content-length. */
function request(url: string, agent: http.Agent, path: string, chunks: string[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}${path}`,
      { method: 'POST', agent, headers: { authorization: BASIC, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      },
    );
    req.on('error', reject);
    // Written in turns, as a client streams a large body: the gateway refuses it part-way.
    const write = (i: number): void => {
      if (i === chunks.length) {
        req.end();
        return;
      }
      if (req.destroyed) return;
      req.write(chunks[i], () => setImmediate(() => write(i + 1)));
    };
    write(0);
  });
}

describe('a request refused part-way through its body', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway(
      { authenticate: async () => ACME as never },
      { campaigns: { startImport: () => ({ write: async () => {}, commit: async () => ({ id: 1 }) as never, abort: () => {} }) } },
    );
  });
  afterAll(() => gateway?.close());

  const REFUSED = [
    {
      what: 'a Campaign Manager list whose member is over 64 KiB (422)',
      path: '/rest/campaign_manager/v1/acme/lists',
      chunks: ['{"name":"Ngā kaihoko 🌏","members":[{"destination":"+64211234567","param1":"', ...Array(10).fill('ā'.repeat(8_000)), '"}]}'],
      status: 422,
    },
    {
      what: 'an SMS Gateway v2 message over the body limit, sent chunked (413)',
      path: '/rest/sms/v2/messages',
      chunks: ['{"destination":"+64211234567","content":"', ...Array(80).fill('你'.repeat(5_000)), '"}'],
      status: 413,
    },
  ];

  for (const r of REFUSED) {
    it(`says it closes the connection after ${r.what}, so a keep-alive client's next request goes on a new one and is answered`, async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const refused = await request(gateway.url, agent, r.path, r.chunks);
        expect(refused.status, refused.body).toBe(r.status);
        expect(refused.connection).toBe('close');
        // The next request of the same client: answered (here 400, an empty body), not reset.
        const next = await request(gateway.url, agent, '/rest/sms/v2/messages', ['']);
        expect(next.status, next.body).toBe(400);
      } finally {
        agent.destroy();
      }
    });
  }
});
