import type { Context } from 'koa';
import { HermodError } from '../../lib/errors';
import { checkIdentityEncoding } from './identity-encoding';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;
const UTF8 = /^utf-?8$/i;

/**
 * Refuses, before any body is read, a request whose body is compressed, that
 * is not JSON, that declares a charset other than UTF-8, or that announces
 * more bytes than allowed.
 *
 * Another charset is refused (415), not decoded: JSON between systems is
 * UTF-8 (RFC 8259 §8.1), and a client that labels its text ISO-8859-1 is
 * better told at once than having its text re-read under a guess (WHATWG
 * reads iso-8859-1 as windows-1252, for one) and sent to handsets.
 */
export function checkJsonRequest(ctx: Context, maxBytes: number): void {
  checkIdentityEncoding(ctx);
  const type = ctx.get('content-type');
  if (type && !JSON_TYPE.test(type)) throw new HermodError('unsupported_media_type', `content-type must be application/json, got ${type}`);
  const charset = CHARSET.exec(type);
  if (charset) {
    const name = charset[1] ?? charset[2] ?? '';
    if (!UTF8.test(name))
      throw new HermodError('unsupported_media_type', `content-type charset must be utf-8 (JSON is UTF-8), got ${name || 'an empty charset'}`);
  }
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > maxBytes) throw new HermodError('body_too_large', `request body exceeds ${maxBytes} bytes`);
}
