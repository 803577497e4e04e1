import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { API_KEY, BASIC, MESSAGE_ID, startTestServer, type TestServer } from './test-server';

const BODY = {
  destination: { mobile: '+64211234567' },
  message: { type: 'text', text: { body: 'Kia ora, e hoa mā — 你好 👋🏽' } },
  delivery_attempts: [{ first: { channel: 'wab', event: 'read', timeout: 15 } }, { last: { channel: 'sms' } }],
  reference: 'заказ-42',
};

/** The APIError shape of SPEC.md §2.4 with the sample bodies' statusCode and error. */
function expectApiError(json: any, status: number, reason: string): void {
  expect(json).toEqual({ code: status, message: expect.any(String), errors: expect.any(Array), statusCode: status, error: reason });
  expect(json.errors.length).toBeGreaterThan(0);
  for (const e of json.errors) {
    expect(e.code).toBe(status);
    expect(typeof e.description).toBe('string');
  }
}

describe('POST /rest/im/v1/message', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());
  afterEach(() => server.failWith(undefined));

  it('answers 202 with the id core gave and sends core the normalized request', async () => {
    const res = await server.post(BODY);
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ id: MESSAGE_ID });
    expect(server.sent.at(-1)).toEqual({
      applicationId: 'app-1',
      destination: { contactId: '', mobile: '+64211234567', email: '' },
      message: { type: 'text', text: 'Kia ora, e hoa mā — 你好 👋🏽', media: undefined, template: undefined },
      attempts: [
        { channel: 'wab', event: 'read', timeout: 15 },
        { channel: 'sms', event: '', timeout: undefined },
      ],
      reference: 'заказ-42',
      schedulerPipe: '',
      dedupKey: '',
    });
  });

  it('names the message for core by its Idempotency-Key and request, so a retry after a failure names the same message', async () => {
    await server.post(BODY, { 'idempotency-key': 'tono-1' });
    const first = server.sent.at(-1)!.dedupKey;
    await server.post({ ...BODY, reference: 'other' }, { 'idempotency-key': 'tono-2' });
    expect(first).toMatch(/^[\w-]{43}\.0$/);
    expect(server.sent.at(-1)!.dedupKey).not.toBe(first);
  });

  it('accepts the API key bare, after Bearer or ApiKey, and HTTP Basic', async () => {
    for (const authorization of [API_KEY, `Bearer ${API_KEY}`, `ApiKey ${API_KEY}`, BASIC]) {
      expect((await server.post(BODY, { authorization })).status).toBe(202);
    }
  });

  it('answers 401 in APIError shape without credentials or with a wrong key, sending nothing', async () => {
    const before = server.sent.length;
    for (const authorization of ['', 'wrong-key', 'Basic ' + Buffer.from('shop:wrong').toString('base64')]) {
      const res = await server.post(BODY, { authorization });
      expect(res.status).toBe(401);
      expectApiError(res.json, 401, 'Unauthorized');
      expect(res.headers.get('www-authenticate')).toMatch(/Basic/);
    }
    expect(server.sent.length).toBe(before);
  });

  it('answers 404 when core does not know the contact or template', async () => {
    server.failWith(new HermodError('not_found', 'contact 3f2b8c1d-4e5a-4b6c-8d7e-9f0a1b2c3d4e not found'));
    const res = await server.post({ ...BODY, destination: { contact_id: '3f2b8c1d-4e5a-4b6c-8d7e-9f0a1b2c3d4e' } });
    expect(res.status).toBe(404);
    expectApiError(res.json, 404, 'Not Found');
    expect(res.json.message).toBe('contact 3f2b8c1d-4e5a-4b6c-8d7e-9f0a1b2c3d4e not found');
  });

  it('answers 422 when core cannot process a valid request', async () => {
    server.failWith(new HermodError('unprocessable', 'no delivery attempt can reach the destination'));
    const res = await server.post(BODY);
    expect(res.status).toBe(422);
    expectApiError(res.json, 422, 'Unprocessable Entity');
    expect(res.json.errors[0].description).toBe('no delivery attempt can reach the destination');
  });

  it('answers 500 "internal error" for an unexpected failure and for core being unavailable', async () => {
    server.failWith(new Error('boom: secret detail'));
    const res = await server.post(BODY);
    expect(res.status).toBe(500);
    expectApiError(res.json, 500, 'Internal Server Error');
    expect(res.json.message).toBe('internal error');

    server.failWith(new HermodError('unavailable', 'core unavailable'));
    const down = await server.post(BODY);
    expect(down.status).toBe(500);
    expectApiError(down.json, 500, 'Internal Server Error');
  });

  it('answers 400 for malformed or empty JSON', async () => {
    for (const body of ['{"destination": {', '']) {
      const res = await server.post(body);
      expect(res.status).toBe(400);
      expectApiError(res.json, 400, 'Bad Request');
    }
  });

  it('answers 415 for a body that is not declared application/json, or not declared at all', async () => {
    const res = await server.post(BODY, { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expectApiError(res.json, 415, 'Unsupported Media Type');

    const undeclared = await fetch(`${server.url}/rest/im/v1/message`, {
      method: 'POST',
      headers: { authorization: API_KEY },
      body: new TextEncoder().encode(JSON.stringify(BODY)),
    });
    expect(undeclared.status).toBe(415);
    expectApiError(await undeclared.json(), 415, 'Unsupported Media Type');
  });

  it('accepts application/json with a charset and ignores unknown query parameters', async () => {
    const res = await fetch(`${server.url}/rest/im/v1/message?utm=x&debug=1`, {
      method: 'POST',
      headers: { authorization: API_KEY, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(BODY),
    });
    expect(res.status).toBe(202);
  });

  it('answers 405 and 404 in APIError shape for other methods and paths under the prefix', async () => {
    const get = await fetch(`${server.url}/rest/im/v1/message`, { headers: { authorization: API_KEY } });
    expect(get.status).toBe(405);
    // RFC 9110 §15.5.6: a 405 names the methods the resource takes.
    expect(get.headers.get('allow')).toBe('POST');
    expectApiError(await get.json(), 405, 'Method Not Allowed');
    const other = await fetch(`${server.url}/rest/im/v1/messages`, { method: 'POST', headers: { authorization: API_KEY } });
    expect(other.status).toBe(404);
    expectApiError(await other.json(), 404, 'Not Found');
  });

  it('sends no X-RateLimit-Limit when there is no limit', async () => {
    const res = await server.post(BODY);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });
});

describe('a body over the size limit', () => {
  it('answers 413 in APIError shape', async () => {
    const server = await startTestServer({ maxBodyBytes: 200 });
    try {
      // 70 characters, well within a reference, but 210 bytes of UTF-8: the limit is on bytes.
      const res = await server.post({ ...BODY, reference: '你'.repeat(70) });
      expect(res.status).toBe(413);
      expectApiError(res.json, 413, 'Payload Too Large');
    } finally {
      await server.close();
    }
  });
});

describe('the rate limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: 2 });
  });
  afterAll(() => server.close());

  it('answers 429 to the third quick request, with X-RateLimit-Limit and a RetryAfter of 10..1000 seconds', async () => {
    // The limit counts requests per clock second: start early in one, so the three share it.
    if (Date.now() % 1000 > 600) await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 10));
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await server.post(BODY));
    const [first, second, third] = answers;
    for (const ok of [first!, second!]) {
      expect(ok.status).toBe(202);
      expect(ok.headers.get('x-ratelimit-limit')).toBe('2');
    }
    expect(third!.status).toBe(429);
    expectApiError(third!.json, 429, 'Too Many Requests');
    expect(third!.headers.get('x-ratelimit-limit')).toBe('2');
    const wait = Number(third!.headers.get('retryafter'));
    expect(Number.isInteger(wait)).toBe(true);
    expect(wait).toBeGreaterThanOrEqual(10);
    expect(wait).toBeLessThanOrEqual(1000);
    expect(third!.headers.get('retry-after')).toBe(String(wait));
    expect(server.sent).toHaveLength(2);
  });
});
