import type { Context } from 'koa';
import { HermodError } from '../../lib/errors';
import { checkIdentityEncoding } from './identity-encoding';
import { valuesSent } from './values-sent';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;
const UTF8 = /^utf-?8$/i;

/** The media types an endpoint names when it refuses one, and whether a body without Content-Type is read as JSON. */
export interface JsonMediaTypes {
  named: readonly string[];
  /** SPEC.md has Intelligent Messaging's body sent with `Content-Type: application/json`; the others have long read one sent without. */
  headerRequired?: boolean;
}

export const JSON_ONLY: JsonMediaTypes = { named: ['application/json'] };

/**
 * Refuses, before any body is read, a request whose body is compressed, that
 * is not JSON, that declares a charset other than UTF-8, or that announces
 * more bytes than allowed.
 *
 * Another charset is refused (415), not decoded: JSON between systems is
 * UTF-8 (RFC 8259 §8.1), and a client that labels its text ISO-8859-1 is
 * better told at once than having its text re-read under a guess (WHATWG
 * reads iso-8859-1 as windows-1252, for one) and sent to handsets.
 *
 * Content-Type sent more than once with different values is refused too
 * (415): Node keeps the first and drops the rest, so the body's type would
 * depend on the order a client or proxy wrote them in (RFC 9110 allows the
 * field once). The same value repeated (some client libraries and proxies
 * write it so) says one thing, and is read as sent once.
 */
export function checkJsonRequest(ctx: Context, maxBytes: number, types: JsonMediaTypes = JSON_ONLY): void {
  checkIdentityEncoding(ctx);
  const said = types.named.join(' or ');
  const sent = valuesSent(ctx.req.rawHeaders, 'content-type');
  if (sent.length > 1 && new Set(sent.map((v) => v.toLowerCase())).size > 1)
    throw new HermodError(
      'unsupported_media_type',
      `Content-Type is sent ${sent.length} times with different values (${sent.map((v) => v || '""').join(', ')}); send it once, as ${said}`,
    );
  const type = ctx.get('content-type');
  if (!type && types.headerRequired) throw new HermodError('unsupported_media_type', `Content-Type is missing; send the body as ${said}`);
  if (type && !JSON_TYPE.test(type)) throw new HermodError('unsupported_media_type', `content-type must be ${said}, got ${type}`);
  const charset = CHARSET.exec(type);
  if (charset) {
    const name = charset[1] ?? charset[2] ?? '';
    if (!UTF8.test(name))
      throw new HermodError('unsupported_media_type', `content-type charset must be utf-8 (JSON is UTF-8), got ${name || 'an empty charset'}`);
  }
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > maxBytes) throw new HermodError('body_too_large', `request body exceeds ${maxBytes} bytes`);
}
