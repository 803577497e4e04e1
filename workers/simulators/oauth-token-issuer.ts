import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { isRecord, randomId, type JsonResponse } from './http-simulator-support';
import { FifoMap } from '../../lib/fifo-map';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Tokens remembered at once (a long run must not grow without bound). */
const MAX_TOKENS = 100_000;
/** Assertions may be signed up to this far ahead of the issuer's clock, and may not live longer than an hour (Google's rule). */
const SKEW_SECONDS = 60;
const MAX_ASSERTION_SECONDS = 3600;

export interface OAuthTokenIssuerOptions {
  /** The service account allowed to ask: its e-mail (the assertion's `iss`) and public key (PEM or KeyObject). */
  serviceAccount: { clientEmail: string; publicKey: string | KeyObject };
  /** The scope an assertion must ask for. */
  scope: string;
  /** Whether the assertion's `aud` names this token endpoint. */
  audienceOk: (aud: string) => boolean;
  /** How long an access token lasts (Google: 3600 s). */
  lifetimeSeconds: number;
}

/**
 * A token endpoint for the OAuth 2.0 JWT bearer grant (RFC 7523), as
 * Google's is for service accounts: the form-encoded request's `assertion`
 * must be an RS256 JWT signed with the service account's key, naming it as
 * `iss`, this endpoint as `aud`, the scope, and an `exp` not passed and at
 * most an hour after `iat`. Failures are OAuth errors (`invalid_grant`,
 * `unsupported_grant_type`). Tokens are opaque and end after their lifetime.
 */
export function createOAuthTokenIssuer(options: OAuthTokenIssuerOptions) {
  const publicKey = typeof options.serviceAccount.publicKey === 'string' ? createPublicKey(options.serviceAccount.publicKey) : options.serviceAccount.publicKey;
  const tokens = new FifoMap<string, number>();
  let issued = 0;

  const refuse = (error: string, description: string): JsonResponse => ({ status: 400, body: { error, error_description: description } });

  return {
    /** How many access tokens it has given out. */
    get issued() {
      return issued;
    },
    /** Answers a POST to the token endpoint. */
    issue(rawBody: Buffer): JsonResponse {
      const form = new URLSearchParams(rawBody.toString('utf8'));
      if (form.get('grant_type') !== JWT_BEARER) return refuse('unsupported_grant_type', `grant_type must be ${JWT_BEARER}`);
      const claims = verifiedClaims(form.get('assertion') ?? '', publicKey);
      if (typeof claims === 'string') return refuse('invalid_grant', claims);
      const now = Math.floor(Date.now() / 1000);
      if (claims.iss !== options.serviceAccount.clientEmail) return refuse('invalid_grant', 'Invalid JWT: unknown issuer');
      if (typeof claims.aud !== 'string' || !options.audienceOk(claims.aud))
        return refuse('invalid_grant', 'Invalid JWT: the audience is not this token endpoint');
      if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number') return refuse('invalid_grant', 'Invalid JWT: iat and exp are required');
      if (claims.exp <= now || claims.iat > now + SKEW_SECONDS || claims.exp - claims.iat > MAX_ASSERTION_SECONDS)
        return refuse('invalid_grant', 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe');
      const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
      if (!scopes.includes(options.scope)) return refuse('invalid_scope', `the assertion must ask for ${options.scope}`);
      const token = `ya29.sim-${randomId(24)}`;
      tokens.set(token, Date.now() + options.lifetimeSeconds * 1000);
      if (tokens.size > MAX_TOKENS) tokens.shift();
      issued++;
      return { status: 200, body: { access_token: token, expires_in: options.lifetimeSeconds, token_type: 'Bearer' } };
    },
    /** Whether a bearer token is one it issued and has not yet expired. */
    valid(token: string): boolean {
      const expiresAt = tokens.get(token);
      return expiresAt !== undefined && expiresAt > Date.now();
    },
  };
}

export type OAuthTokenIssuer = ReturnType<typeof createOAuthTokenIssuer>;

/** The JWT's claims once its RS256 signature checks out, or why it does not. */
function verifiedClaims(assertion: string, publicKey: KeyObject): Record<string, unknown> | string {
  const parts = assertion.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return 'Invalid JWT: not a compact JWS';
  const [header, payload, signature] = parts as [string, string, string];
  const head = parseJsonPart(header);
  if (!isRecord(head) || head.alg !== 'RS256') return 'Invalid JWT: the algorithm must be RS256';
  const signed = verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, 'base64url'));
  if (!signed) return 'Invalid JWT Signature.';
  const claims = parseJsonPart(payload);
  return isRecord(claims) ? claims : 'Invalid JWT: the claims are not a JSON object';
}

function parseJsonPart(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
