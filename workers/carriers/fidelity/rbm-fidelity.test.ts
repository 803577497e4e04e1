import { afterEach, describe, expect, it } from 'vitest';
import { rcsWebhook } from '../../../lib/carrier-webhooks/rcs-webhook';
import { imJob, quietLog, sendError } from '../http/http-carrier-test-kit';
import { RBM_SCOPE } from '../rcs/rbm-access-tokens';
import { createRcsCarrier } from '../rcs/rcs-carrier';
import { rbmServiceAccount } from '../rcs/rbm-test-kit';
import * as rbm from './rbm-documented-examples';
import { startReplayServer } from './replay-server';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** The RCS carrier against a server that answers with RBM's documented answers. */
async function replay(answer: { status: number; body: unknown }) {
  const server = await startReplayServer({ '/token': rbm.TOKEN_ANSWER, '*': answer });
  closers.push(server.close);
  const account = rbmServiceAccount();
  account.pointAt(server.port);
  const carrier = createRcsCarrier(
    { baseUrl: `http://localhost:${server.port}`, serviceAccount: account.file, sender: 'hermod-agent', webhookSecret: 'x', apiVersion: '' },
    quietLog,
  );
  return { server, carrier, account };
}

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('RBM as Google documents it: the requests hermod makes', () => {
  it('asks for a token with the JWT bearer grant, then sends the documented agentMessages request with it', async () => {
    const { server, carrier, account } = await replay(rbm.SEND_TEXT.answer);
    const job = imJob('rcs', '+12223334444', { type: 'text' }, 'Hello, world!');
    expect(await carrier.send(job)).toEqual({ carrierIds: [job.id] });

    const [token, send] = server.requests;
    expect(token).toMatchObject({ method: 'POST', path: '/token' });
    const form = new URLSearchParams(token!.rawBody);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(claimsOf(form.get('assertion')!)).toMatchObject({ iss: account.clientEmail, aud: `http://localhost:${server.port}/token`, scope: RBM_SCOPE });

    expect(send).toMatchObject({ method: 'POST', path: rbm.SEND_TEXT.path, query: { messageId: job.id, agentId: 'hermod-agent' } });
    expect(send!.headers.authorization).toBe(`Bearer ${rbm.TOKEN_ANSWER.body.access_token}`);
    expect(send!.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(send!.rawBody)).toEqual(rbm.SEND_TEXT.body);
  });

  it('sends a file as the documented contentInfo', async () => {
    const { server, carrier } = await replay(rbm.SEND_TEXT.answer);
    const url = rbm.SEND_FILE.body.contentMessage.contentInfo.fileUrl;
    await carrier.send(imJob('rcs', '+12223334444', { type: 'media', media: { mimeType: 'image/jpeg', url } }, url));
    expect(JSON.parse(server.requests.at(-1)!.rawBody)).toEqual(rbm.SEND_FILE.body);
  });

  it('gives up on a phone that cannot take RCS, as the documented NOT_FOUND says', async () => {
    const { carrier } = await replay(rbm.NOT_RCS_CAPABLE);
    const err = await sendError(carrier.send(imJob('rcs', '+12223334444', { type: 'text' }, 'Hello, world!')));
    expect(err).toMatchObject({ code: 'carrier_rejected', retryable: false });
    expect(err.message).toMatch(/cannot take RCS: Requested entity was not found\. \(NOT_FOUND\)/);
  });
});

describe('RBM as Google documents it: the webhooks hermod takes', () => {
  it('reads DELIVERED, READ and TTL_EXPIRATION_REVOKED in their Pub/Sub push envelope', () => {
    const publishTime = Date.parse(rbm.pubSubPush({}).message.publishTime);
    expect(rcsWebhook.parse(rbm.pubSubPush(rbm.USER_EVENT_DELIVERED))).toEqual([{ carrierId: 'MSG-1', status: 'received', at: publishTime, errorCode: '' }]);
    expect(rcsWebhook.parse(rbm.pubSubPush(rbm.USER_EVENT_READ))).toEqual([{ carrierId: 'MSG-1', status: 'read', at: publishTime, errorCode: '' }]);
    expect(rcsWebhook.parse(rbm.pubSubPush(rbm.SERVER_EVENT_TTL_REVOKED))).toEqual([
      { carrierId: 'MSG-1', status: 'expired', at: Date.parse('2018-12-31T15:01:23.045Z'), errorCode: '' },
    ]);
  });

  it('reports nothing for typing or a user’s own message', () => {
    expect(rcsWebhook.parse(rbm.pubSubPush(rbm.USER_EVENT_IS_TYPING))).toEqual([]);
    expect(rcsWebhook.parse(rbm.pubSubPush(rbm.USER_MESSAGE_TEXT))).toEqual([]);
  });

  it('answers the documented webhook verification with its secret, for our client token only', () => {
    expect(rcsWebhook.handshake?.(rbm.WEBHOOK_VERIFICATION, rbm.WEBHOOK_VERIFICATION.clientToken)).toEqual({ answer: '1234567890' });
    expect(rcsWebhook.handshake?.(rbm.WEBHOOK_VERIFICATION, 'another-client-token')).not.toHaveProperty('answer');
  });
});
