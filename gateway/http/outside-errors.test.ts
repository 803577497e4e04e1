import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../../test/support/raw-exchange';
import { startTestGateway } from '../gateway-test-kit';

const WHERE = "hermod's interfaces are under /rest/sms/v2, /rest/gateway, /rest/campaign_manager/v1 and /rest/im/v1";

describe('a path outside every interface', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it.each([
    ['GET', '/'],
    ['GET', '/rest'],
    ['POST', '/rest/sms/v1/messages'],
    ['POST', '/rest/im/v2/message'],
    ['GET', '/kia-ora/t%C4%93n%C4%81-koe'],
  ])('is answered 404 in JSON any interface’s client reads, saying where the interfaces are: %s %s', async (method, path) => {
    const res = await fetch(`${gateway.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ message: `no route for ${method} ${path}; ${WHERE}`, statusCode: 404, error: 'Not Found', code: 404 });
  });

  it('leaves each interface its own 404 under its prefix', async () => {
    const answers = await Promise.all(
      ['/rest/sms/v2/nope', '/rest/gateway/nope/x', '/rest/campaign_manager/v1/acme/nope/x/y', '/rest/im/v1/nope'].map(async (p) =>
        (await fetch(`${gateway.url}${p}`)).json(),
      ),
    );
    expect(answers).toEqual([
      { message: 'no route for GET /rest/sms/v2/nope', statusCode: 404, error: 'Not Found' },
      { message: 'no route for GET /rest/gateway/nope/x', code: 404, error: 'not_found', 'error-desc': 'no route for GET /rest/gateway/nope/x' },
      { code: 404, message: 'no route for GET /rest/campaign_manager/v1/acme/nope/x/y' },
      {
        code: 404,
        message: 'no route for GET /rest/im/v1/nope',
        errors: [{ code: 404, description: 'no route for GET /rest/im/v1/nope' }],
        statusCode: 404,
        error: 'Not Found',
      },
    ]);
  });

  it('answers a request for the server as a whole (OPTIONS *) in the same JSON, not with a 500', async () => {
    const answer = await rawExchange(gateway.url, 'OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({
      message: `no route for OPTIONS *; ${WHERE}`,
      statusCode: 404,
      error: 'Not Found',
      code: 404,
    });
  });
});
