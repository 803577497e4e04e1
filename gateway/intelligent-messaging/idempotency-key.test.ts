import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import { startTestServer, type TestServer } from './test-server';

const body = (text: string) => ({
  destination: { mobile: '+6421000001' },
  message: { type: 'text', text: { body: text } },
  delivery_attempts: [{ channel: 'sms' }],
});

describe('Intelligent Messaging Idempotency-Key', () => {
  let server: TestServer;
  beforeEach(async () => (server = await startTestServer()));
  afterEach(() => server.close());

  it('answers 409 in APIError shape while the first message under the key is still being sent, then replays it', async () => {
    const release = server.hold();
    const first = server.post(body('Kia ora, e hoa mā — tēnā koe'), { 'idempotency-key': 'k-1' });
    await new Promise((r) => setTimeout(r, 100));
    const meanwhile = await server.post(body('Kia ora, e hoa mā — tēnā koe'), { 'idempotency-key': 'k-1' });
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.json).toMatchObject({ code: 409, message: expect.stringContaining('still being processed'), errors: [{ code: 409 }] });
    release();
    expect((await first).status).toBe(202);
    const again = await server.post(body('Kia ora, e hoa mā — tēnā koe'), { 'idempotency-key': 'k-1' });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(server.sent).toHaveLength(1);
  });

  it('releases the key when core fails the send, so the retry sends', async () => {
    server.failWith(new HermodError('unavailable', 'core is restarting'));
    expect((await server.post(body('Привет'), { 'idempotency-key': 'k-2' })).status).toBe(500);
    server.failWith(undefined);
    const retry = await server.post(body('Привет'), { 'idempotency-key': 'k-2' });
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(server.sent).toHaveLength(1);
  });

  it('refuses a key longer than 255 characters', async () => {
    const r = await server.post(body('你好世界'), { 'idempotency-key': 'k'.repeat(256) });
    expect(r.status).toBe(400);
    expect(server.sent).toHaveLength(0);
  });

  it('counts a key in characters, not in the bytes UTF-8 writes them with', async () => {
    // A header carries UTF-8 bytes; fetch takes them as a byte string.
    const asHeader = (key: string) => Buffer.from(key, 'utf8').toString('latin1');
    const within = 'kī-'.concat('ā'.repeat(252));
    expect(within).toHaveLength(255);
    expect((await server.post(body('Tēnā koe'), { 'idempotency-key': asHeader(within) })).status).toBe(202);
    expect((await server.post(body('Tēnā koe'), { 'idempotency-key': asHeader(`${within}ā`) })).status).toBe(400);
    expect((await server.post(body('Tēnā koe'), { 'idempotency-key': asHeader('🔑'.repeat(63)) })).status).toBe(202);
    expect(server.sent).toHaveLength(2);
  });
});
