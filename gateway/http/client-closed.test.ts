import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { httpRequests } from '../../lib/metrics';
import { startTestGateway } from '../gateway-test-kit';

const ACME = { ok: true, application: { id: 'app-1', name: 'acme', password: '', apiKey: '' } };
const BASIC = `Basic ${Buffer.from('acme:secret').toString('base64')}`;

/** Requests of each interface that carry a body, and the start of one: what a client sent before it went away. */
const REQUESTS = [
  {
    name: 'sms_v2',
    path: '/rest/sms/v2/messages',
    route: '/rest/sms/v2/messages',
    auth: BASIC,
    body: '{"destination":"+64211234567","content":"Kia ora, e hoa mā 🌿',
  },
  { name: 'gateway_v1', path: '/rest/gateway/messages', route: '/rest/gateway/messages', auth: BASIC, body: '{"to":["+64211234567"],"body":"你好，世界 ' },
  {
    name: 'intelligent_messaging',
    path: '/rest/im/v1/message',
    route: '/rest/im/v1/message',
    auth: 'kī-matua',
    body: '{"destination":{"phone_number":"+64211234567"},"sms":{"text":"Tēnā koe',
  },
  {
    name: 'campaign_manager',
    path: '/rest/campaign_manager/v1/acme/lists',
    route: '/rest/campaign_manager/v1/:application_name/lists',
    auth: BASIC,
    body: '{"name":"Ngā kaihoko 🌏","members":[{"destination":"+64211234567","param1":"Mere"},',
  },
];

async function count(name: string, route: string, status: string): Promise<number> {
  const sample = (await httpRequests.get()).values.find(
    (v) => v.labels.interface === name && v.labels.route === route && v.labels.method === 'POST' && String(v.labels.status) === status,
  );
  return sample?.value ?? 0;
}

/** Sends the head and part of the body over a raw socket, then closes it: a client that went away mid-request. */
async function sendPartOfBody(url: string, path: string, auth: string, body: string): Promise<void> {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: localhost\r\nauthorization: ${auth}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body) + 100}\r\n\r\n${body}`,
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.destroy();
}

describe('a client that goes away before its request body has arrived', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  const logged: string[] = [];
  beforeAll(async () => {
    gateway = await startTestGateway(
      {
        authenticate: async () => ACME as never,
        // A fault of ours: what core's client never throws.
        send: async () => {
          throw new TypeError('Cannot read properties of undefined (reading “outcome”)');
        },
        claimIdempotencyKey: async () => ({ claimed: true, fingerprint: '', response: '', claimId: 'kerēme-1', leaseMs: 60_000 }),
        releaseIdempotencyKey: async () => ({}) as never,
      },
      {
        im: { takeRateBudget: async () => ({ limit: 0, granted: 1, windowEndsInMs: 1_000 }) },
        campaigns: { startImport: () => ({ write: async () => {}, commit: async () => ({ id: 1 }) as never, abort: () => {} }) },
      },
    );
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream);
      vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
        logged.push(String(chunk));
        return write(chunk, ...rest);
      }) as typeof stream.write);
    }
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await gateway.close();
  });
  afterEach(() => {
    logged.length = 0;
  });

  it('is counted 499 on a Campaign Manager import sent with an Idempotency-Key, whose body is fingerprinted as it streams', async () => {
    const { path, route, body } = REQUESTS[3]!;
    const before = await count('campaign_manager', route, '499');
    await sendPartOfBody(gateway.url, path, `${BASIC}\r\nidempotency-key: rārangi-${Date.now()}`, body);
    await vi.waitFor(async () => expect(await count('campaign_manager', route, '499')).toBe(before + 1));
    expect(logged.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  });

  it('still answers 500 and logs an error when the whole body arrived and the gateway itself failed', async () => {
    const route = '/rest/sms/v2/messages';
    const before = await count('sms_v2', route, '500');
    const res = await fetch(`${gateway.url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: BASIC },
      body: JSON.stringify({ destination: '+64211234567', content: 'Kia ora, e hoa mā 🌿 你好' }),
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ message: 'internal error', statusCode: 500, error: 'Internal Server Error' });
    expect(await count('sms_v2', route, '500')).toBe(before + 1);
    expect(logged.some((l) => l.includes('"level":"error"') && l.includes('sms v2 request failed'))).toBe(true);
  });

  it.each(REQUESTS)('is counted 499 on $name, not as a server error, and logged at info', async ({ name, path, route, auth, body }) => {
    const before = { '499': await count(name, route, '499'), '500': await count(name, route, '500') };
    await sendPartOfBody(gateway.url, path, auth, body);
    await vi.waitFor(async () => expect(await count(name, route, '499')).toBe(before['499'] + 1));
    expect(await count(name, route, '500')).toBe(before['500']);
    const lines = logged.filter((l) => l.includes(path)).map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(lines).toEqual([expect.objectContaining({ level: 'info', msg: 'client closed the request before its body arrived' })]);
  });
});
