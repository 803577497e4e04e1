import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createOAuthTokenIssuer } from './oauth-token-issuer';

const SCOPE = 'https://www.googleapis.com/auth/rcsbusinessmessaging';
const AUD = 'http://localhost:8702/token';
const EMAIL = 'hermod-rbm@hermod-simulator.iam.gserviceaccount.com';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
function assertion(claims: Record<string, unknown>, key: KeyObject = privateKey, alg = 'RS256'): string {
  const signed = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}`;
  return `${signed}.${sign('RSA-SHA256', Buffer.from(signed), key).toString('base64url')}`;
}
const now = () => Math.floor(Date.now() / 1000);
const good = () => ({ iss: EMAIL, aud: AUD, scope: SCOPE, iat: now(), exp: now() + 3600 });
const form = (jwt: string, grant = 'urn:ietf:params:oauth:grant-type:jwt-bearer') =>
  Buffer.from(new URLSearchParams({ grant_type: grant, assertion: jwt }).toString());
const issuer = (lifetimeSeconds = 3600) =>
  createOAuthTokenIssuer({ serviceAccount: { clientEmail: EMAIL, publicKey }, scope: SCOPE, audienceOk: (aud) => aud === AUD, lifetimeSeconds });

describe('the simulated OAuth token endpoint (JWT bearer grant)', () => {
  it('issues a bearer token for a well-signed assertion, valid until its lifetime ends', async () => {
    const tokens = issuer(1);
    const answer = tokens.issue(form(assertion(good())));
    expect(answer).toMatchObject({ status: 200, body: { token_type: 'Bearer', expires_in: 1 } });
    const token = (answer.body as { access_token: string }).access_token;
    expect(tokens.valid(token)).toBe(true);
    expect(tokens.valid('ya29.made-up')).toBe(false);
    await new Promise((r) => setTimeout(r, 1050));
    expect(tokens.valid(token)).toBe(false);
  });

  it.each([
    ['signed with another key', () => assertion(good(), stranger), /Invalid JWT Signature/],
    ['not RS256', () => assertion(good(), privateKey, 'HS256'), /RS256/],
    ['from another issuer', () => assertion({ ...good(), iss: 'mallory@example.com' }), /unknown issuer/],
    ['for another audience', () => assertion({ ...good(), aud: 'https://oauth2.googleapis.com/token' }), /audience/],
    ['expired', () => assertion({ ...good(), iat: now() - 7200, exp: now() - 3600 }), /short-lived/],
    ['living longer than an hour', () => assertion({ ...good(), exp: now() + 7200 }), /short-lived/],
    ['without its times', () => assertion({ iss: EMAIL, aud: AUD, scope: SCOPE }), /iat and exp/],
    ['not a JWT', () => 'Kia ora, e hoa mā 👋🏽', /compact JWS/],
  ])('refuses an assertion %s with invalid_grant', (_, make, reason) => {
    const answer = issuer().issue(form(make()));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(reason) });
  });

  it('refuses another scope and another grant type', () => {
    expect(issuer().issue(form(assertion({ ...good(), scope: 'https://www.googleapis.com/auth/cloud-platform' })))).toMatchObject({
      status: 400,
      body: { error: 'invalid_scope' },
    });
    expect(issuer().issue(form(assertion(good()), 'client_credentials'))).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
    expect(issuer().issued).toBe(0);
  });
});
