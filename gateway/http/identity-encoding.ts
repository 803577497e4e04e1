import type { Context } from 'koa';
import { HermodError } from '../../lib/errors';

/**
 * Refuses, before any body is read, a request whose body is compressed or
 * otherwise content-coded: hermod reads bodies as they arrive, and gzip read
 * as text would be reported as broken UTF-8. RFC 9110 §15.5.16 answers a
 * coding the server does not take with 415, and §12.5.3 lets the answer say
 * which it does (only identity: no coding). An absent header is identity too.
 */
export function checkIdentityEncoding(ctx: Context): void {
  const codings = ctx
    .get('content-encoding')
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding !== '' && coding.toLowerCase() !== 'identity');
  if (codings.length === 0) return;
  ctx.set('Accept-Encoding', 'identity');
  throw new HermodError('unsupported_media_type', `Content-Encoding ${codings.join(', ')} is not supported: send the body uncompressed`);
}
