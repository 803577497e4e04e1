import { afterEach, describe, expect, it } from 'vitest';
import type { SendResult } from '../../proto/gen/hermod/v1/messages';
import { startTestGateway } from '../gateway-test-kit';

const ACME = { ok: true, application: { id: 'app-1', name: 'acme', password: '', apiKey: '' } };

describe('POST /rest/sms/v2/messages when core refuses the message', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>> | undefined;
  afterEach(async () => gateway?.close());

  const sendRefusedWith = async (code: string, message: string) => {
    gateway = await startTestGateway({
      authenticate: async () => ACME as never,
      send: async (): Promise<SendResult> => ({ outcome: { $case: 'failure', value: { code, message } } }),
    });
    return fetch(`${gateway.url}/rest/sms/v2/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('acme:secret').toString('base64')}` },
      body: JSON.stringify({ destination: '+64211234567', content: 'Kia ora, tō tono 🌿' }),
    });
  };

  it("answers core's own reason with its status: 503 for a message core could not take now, which the client retries", async () => {
    const res = await sendRefusedWith('unavailable', 'accepted messages are waiting for the message bus; try again later');
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ message: expect.stringContaining('waiting for the message bus') });
  });

  it('answers 400 for a message core finds invalid', async () => {
    const res = await sendRefusedWith('invalid_attrib', 'source 4005 is not one of this application’s addresses');
    expect(res.status).toBe(400);
  });
});
