import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../../test/support/raw-exchange';
import { startTestGateway } from '../gateway-test-kit';

const ACME = { ok: true, application: { id: 'app-1', name: 'acme', password: '', apiKey: '' } };
const BASIC = `Basic ${Buffer.from('acme:secret').toString('base64')}`;
const MESSAGE = '{"destination":"+6421000001","content":"Kia ora, e hoa mā 👋🏽"}';

/** The answer to raw bytes, with its Content-Type. */
async function exchange(url: string, request: string): Promise<{ status: number; type: string; body: string }> {
  const { status, headers, body } = await rawExchange(url, request);
  return { status, type: /\r\ncontent-type: ([^\r]*)/i.exec(headers)?.[1] ?? '', body };
}

/** Every POST of the four interfaces, with a body it takes, and how its error body reads. */
const ENDPOINTS = [
  {
    path: '/rest/sms/v2/messages',
    body: MESSAGE,
    shape: (status: number, message: string) => ({ statusCode: status, error: 'Unsupported Media Type', message }),
  },
  {
    path: '/rest/gateway/messages',
    body: MESSAGE,
    shape: (status: number, message: string) => ({ code: status, error: 'invalid_json', message, 'error-desc': message }),
  },
  {
    path: '/rest/gateway/messages/broadcast',
    body: '{"destination":["+6421000001"],"content":"Kia ora"}',
    shape: (status: number, message: string) => ({ code: status, error: 'invalid_json', message, 'error-desc': message }),
  },
  {
    path: '/rest/campaign_manager/v1/acme/lists',
    body: '{"name":"Kaihoko","members":[{"destination":"+6421000001"}]}',
    shape: (status: number, message: string) => ({ code: status, message }),
  },
  {
    path: '/rest/campaign_manager/v1/acme/scheduled_campaigns',
    body: '{"name":"Hui","schedule":"2030-01-01T00:00:00Z","content":"Kia ora","members":[{"destination":"+6421000001"}]}',
    shape: (status: number, message: string) => ({ code: status, message }),
  },
  {
    path: '/rest/im/v1/message',
    body: '{"destination":{"mobile":"+6421000001"},"message":{"type":"text","text":{"body":"Kia ora"}}}',
    shape: (status: number, message: string) => ({
      code: status,
      message,
      errors: [{ code: status, description: message }],
      statusCode: status,
      error: 'Unsupported Media Type',
    }),
  },
];

/** The media types each interface names when it refuses one: v1's vendor type besides JSON (COMPAT.md). */
const NAMED: Record<string, string> = {
  '/rest/gateway/messages': 'application/json or application/vnd.modica.gateway.v1+json',
  '/rest/gateway/messages/broadcast': 'application/json or application/vnd.modica.gateway.v1+json',
};
const named = (path: string): string => NAMED[path] ?? 'application/json';

describe('the Content-Type of a POST', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway(
      { authenticate: async () => ACME as never },
      { im: { takeRateBudget: async ({ wanted }) => ({ limit: 0, granted: wanted, windowEndsInMs: 1_000 }) } },
    );
  });
  afterAll(() => gateway.close());

  const post = (path: string, headers: string, body: string) =>
    exchange(
      gateway.url,
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${BASIC}\r\nConnection: close\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );

  it.each(ENDPOINTS)(
    'sent twice with different values is refused with 415 in the interface’s shape, naming both and the media type to send: $path',
    async ({ path, body, shape }) => {
      const r = await post(path, 'Content-Type: application/json\r\nContent-Type: text/plain\r\n', body);
      expect(r.status, r.body).toBe(415);
      expect(JSON.parse(r.body)).toEqual(
        shape(415, `Content-Type is sent 2 times with different values (application/json, text/plain); send it once, as ${named(path)}`),
      );
    },
  );

  it('sent a second time empty is refused too, the empty one shown as ""', async () => {
    const { path, body, shape } = ENDPOINTS[0]!;
    const r = await post(path, 'Content-Type: application/json\r\nContent-Type: \r\n', body);
    expect(r.status, r.body).toBe(415);
    expect(JSON.parse(r.body)).toEqual(
      shape(415, 'Content-Type is sent 2 times with different values (application/json, ""); send it once, as application/json'),
    );
  });

  it.each(ENDPOINTS)('repeated with the same value (as some client libraries and proxies write it) is read as sent once: $path', async ({ path, body }) => {
    const once = await post(path, 'Content-Type: application/json\r\n', body);
    for (const twice of [
      'Content-Type: application/json\r\ncontent-type: application/json\r\n',
      'Content-Type: application/json\r\nContent-Type: Application/JSON \r\n',
    ]) {
      const r = await post(path, twice, body);
      expect(r.status, r.body).toBe(once.status);
      expect(r.body).not.toMatch(/Content-Type/i);
    }
  });

  it.each(ENDPOINTS)('that is not JSON is refused with 415 naming the media types the endpoint takes: $path', async ({ path, body, shape }) => {
    const r = await post(path, 'Content-Type: text/plain\r\n', body);
    expect(r.status, r.body).toBe(415);
    expect(JSON.parse(r.body)).toEqual(shape(415, `content-type must be ${named(path)}, got text/plain`));
  });

  it('left out is refused by Intelligent Messaging, which SPEC has take application/json only, with 415 saying it is missing', async () => {
    const { path, body, shape } = ENDPOINTS.at(-1)!;
    const r = await post(path, '', body);
    expect(r.status, r.body).toBe(415);
    expect(JSON.parse(r.body)).toEqual(shape(415, 'Content-Type is missing; send the body as application/json'));
  });

  it('sent twice with different values on delete_multiple_lists is refused with 415 in its plain text', async () => {
    const r = await post(
      '/rest/campaign_manager/v1/acme/delete_multiple_lists',
      'Content-Type: application/json\r\nContent-Type: application/xml\r\n',
      '{"list_ids":[1]}',
    );
    expect(r.status).toBe(415);
    expect(r.type).toMatch(/^text\/plain/);
    expect(r.body).toBe('error: Content-Type is sent 2 times with different values (application/json, application/xml); send it once, as application/json');
  });
});
