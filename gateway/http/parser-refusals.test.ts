import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../../test/support/raw-exchange';
import { startTestGateway } from '../gateway-test-kit';

const BODY = '{"destination":"+6421000001","content":"Kia ora, e hoa mā 👋🏽"}';

describe('a request Node’s HTTP parser refuses', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it.each([
    [
      'Content-Length beside Transfer-Encoding',
      `Content-Length: 10\r\nTransfer-Encoding: chunked\r\n`,
      /Transfer-Encoding can't be present with Content-Length \(send either Content-Length or Transfer-Encoding: chunked\)/,
    ],
    ['two Content-Lengths', `Content-Length: ${Buffer.byteLength(BODY)}\r\nContent-Length: 5\r\n`, /Duplicate Content-Length \(send Content-Length once\)/],
    ['a Content-Length past any number', `Content-Length: 99999999999999999999\r\n`, /Content-Length overflow/],
    ['a folded header line', `Content-Length: ${Buffer.byteLength(BODY)}\r\nX-Kia-Ora: e hoa\r\n mā\r\n`, /a header field must be one line/],
  ])('is answered 400 on SMS Gateway v2 in its error shape, saying what was wrong: %s', async (_name, headers, message) => {
    const r = await rawExchange(
      gateway.url,
      `POST /rest/sms/v2/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${headers}\r\n${BODY}`,
    );
    expect(r.status, r.headers + r.body).toBe(400);
    expect(r.headers).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(r.body)).toEqual({ message: expect.stringMatching(message), statusCode: 400, error: 'Bad Request' });
  });

  it('answers a raw non-ASCII path under Campaign Manager in its shape, and one outside every interface in the JSON any client reads', async () => {
    const cm = await rawExchange(
      gateway.url,
      Buffer.concat([Buffer.from('GET /rest/campaign_manager/v1/'), Buffer.from('kāinga', 'utf8'), Buffer.from('/lists HTTP/1.1\r\nHost: localhost\r\n\r\n')]),
    );
    // Campaign Manager answers a value it cannot take 422, as it does every invalid attribute.
    expect(cm.status).toBe(422);
    expect(JSON.parse(cm.body)).toEqual({
      code: 422,
      message: expect.stringMatching(/Invalid char in url path \(characters outside ASCII in a path must be percent-encoded\)/),
    });
    const outside = await rawExchange(gateway.url, 'POST /kia-ora HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n');
    expect(outside.status).toBe(400);
    expect(JSON.parse(outside.body)).toEqual({
      message: expect.stringMatching(/^the request is not valid HTTP\/1\.1: /),
      statusCode: 400,
      error: 'Bad Request',
      code: 400,
    });
  });
});

describe('a request head Node would answer with an empty body', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('answers an HTTP/1.1 request without Host 400 in the interface’s error shape', async () => {
    const r = await rawExchange(
      gateway.url,
      `POST /rest/sms/v2/messages HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`,
    );
    expect(r.status, r.headers + r.body).toBe(400);
    expect(JSON.parse(r.body)).toEqual({ message: 'an HTTP/1.1 request must have a Host header', statusCode: 400, error: 'Bad Request' });
  });

  it('answers an Expect other than 100-continue 417 in the interface’s error shape, v1’s included', async () => {
    const r = await rawExchange(
      gateway.url,
      `POST /rest/gateway/messages HTTP/1.1\r\nHost: localhost\r\nExpect: kia-ora\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`,
    );
    expect(r.status, r.headers + r.body).toBe(417);
    expect(JSON.parse(r.body)).toMatchObject({ code: 417, message: 'Expect: kia-ora is not supported; only 100-continue is' });
  });

  it('answers a body gzipped inside its chunks 501 instead of reading the gzip as the body', async () => {
    const chunked = `${Buffer.byteLength(BODY).toString(16)}\r\n${BODY}\r\n0\r\n\r\n`;
    const r = await rawExchange(
      gateway.url,
      `POST /rest/sms/v2/messages HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n${chunked}`,
    );
    expect(r.status, r.headers + r.body).toBe(501);
    expect(JSON.parse(r.body)).toEqual({
      message: 'Transfer-Encoding gzip is not supported: send the body as it is, chunked or with Content-Length',
      statusCode: 501,
      error: 'Not Implemented',
    });
  });
});
