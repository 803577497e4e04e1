import type { JWT } from 'google-auth-library';
import { HermodError } from '../../../lib/errors';
import { GOOGLE_TOKEN_URI, type ServiceAccountKey } from './rbm-service-account';

/** The OAuth scope of the RBM API. */
export const RBM_SCOPE = 'https://www.googleapis.com/auth/rcsbusinessmessaging';

/** Google's access tokens last an hour; a new one is fetched this long before the old one ends. */
const DEFAULT_REFRESH_BEFORE_MS = 5 * 60 * 1000;

export interface RbmAccessTokens {
  /** A bearer token for the RBM API: the cached one, or a new one when it is about to expire. */
  token(): Promise<string>;
  /** Forget the cached token (RBM answered 401 with it), so the next token() fetches a new one. */
  invalidate(): void;
}

/**
 * Access tokens for a service account through google-auth-library's JWT
 * client: the RFC 7523 JWT bearer grant (an RS256 assertion signed with the
 * key's private key), cached, and refreshed `refreshBeforeMs` before expiry.
 * The library posts to Google's token endpoint; a key whose `token_uri` names
 * another one (the RBM simulator) gets its requests and its assertions'
 * audience pointed there instead.
 */
export function createRbmAccessTokens(key: ServiceAccountKey, options: { refreshBeforeMs?: number } = {}): RbmAccessTokens {
  const elsewhere = key.tokenUri !== GOOGLE_TOKEN_URI;
  // Made at the first token asked for: google-auth-library and its dependencies are some 50 ms of a start
  // that sends no RCS message.
  let client: JWT | undefined;
  let made: Promise<JWT> | undefined;
  const make = async (): Promise<JWT> => {
    const { JWT } = await import('google-auth-library');
    const jwt = new JWT({
      email: key.clientEmail,
      key: key.privateKey,
      keyId: key.privateKeyId || undefined,
      scopes: [RBM_SCOPE],
      eagerRefreshThresholdMillis: options.refreshBeforeMs ?? DEFAULT_REFRESH_BEFORE_MS,
      ...(elsewhere ? { additionalClaims: { aud: key.tokenUri } } : {}),
    });
    if (elsewhere) {
      jwt.transporter.interceptors.request.add({
        resolved: async (request) => (String(request.url) === GOOGLE_TOKEN_URI ? { ...request, url: new URL(key.tokenUri) } : request),
      });
    }
    client = jwt;
    return jwt;
  };
  return {
    async token() {
      try {
        made ??= make();
        const { token } = await (await made).getAccessToken();
        if (!token) throw new Error('the token endpoint gave no access_token');
        return token;
      } catch (err) {
        throw tokenError(err);
      }
    },
    invalidate() {
      // Marked expired (not dropped): the library then asks for a new token rather than handing back its cached one.
      if (client) client.credentials = { ...client.credentials, expiry_date: 1 };
    },
  };
}

/** The token endpoint refused the key (4xx: a wrong or revoked key, given up) or could not be reached (retried). */
function tokenError(err: unknown): HermodError {
  const status = (err as { response?: { status?: number } }).response?.status;
  const message = err instanceof Error ? err.message : String(err);
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429)
    return new HermodError('carrier_rejected', `the RBM token endpoint refused the service account (HTTP ${status}): ${message}`, { cause: err });
  return new HermodError('carrier_transient', `no RBM access token: ${message}`, { cause: err });
}
