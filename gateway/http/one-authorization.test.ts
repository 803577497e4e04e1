import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway } from '../gateway-test-kit';

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

/** A raw request (fetch would fold two headers of one name into one), and the whole answer. */
function rawRequest(url: string, head: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}

describe('a request with two Authorization headers', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  const asked: string[] = [];
  beforeAll(async () => {
    gateway = await startTestGateway({
      authenticate: async (req) => {
        asked.push(req.credential?.$case ?? 'none');
        return { ok: true, application: { id: 'app-1', name: 'acme', password: '', apiKey: '' } } as never;
      },
    });
  });
  afterAll(() => gateway.close());

  it.each([
    ['SMS Gateway v2', 'POST /rest/sms/v2/messages', '{"destination":"+6421000001","content":"Kia ora 👋🏽"}', /"statusCode":401/],
    ['Gateway v1', 'POST /rest/gateway/messages', '{"destination":"+6421000001","content":"你好"}', /"code":401/],
    ['Intelligent Messaging', 'POST /rest/im/v1/message', '{}', /"statusCode":401/],
    ['Campaign Manager', 'GET /rest/campaign_manager/v1/acme/lists', '', /^{"code":401,/],
  ])('is refused 401 on %s in its own error body, whichever tenant either header names', async (_name, line, body, shape) => {
    const head = `${line} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: ${basic('acme', 'secret')}\r\nAuthorization: ${basic('other', 'pā💥')}\r\n`;
    const answer = await rawRequest(gateway.url, head, body);
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    const text = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    expect(text).toMatch(shape);
    expect(text).toMatch(/more than one Authorization header/);
    expect(asked).toEqual([]);
  });
});
