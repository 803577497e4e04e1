import type { IncomingMessage } from 'node:http';
import { HermodError } from '../../lib/errors';

/**
 * What is wrong with a request's head that Node's parser lets through or
 * answers itself without a body, checked before the request reaches an
 * interface; undefined when nothing is.
 *
 * - An HTTP/1.1 request without Host (RFC 9112 §3.2: answered 400). Node
 *   answers it with an empty 400 unless `requireHostHeader` is off, which the
 *   gateway's servers turn off so the answer is in the interface's shape.
 * - A transfer coding besides chunked (`Transfer-Encoding: gzip, chunked`):
 *   Node decodes the chunks and hands on the gzip as if it were the body.
 *   RFC 9112 §6.1: a coding the server does not understand is answered 501.
 */
export function headProblem(req: IncomingMessage): HermodError | undefined {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.headers.host === undefined)
    return new HermodError('invalid_attrib', 'an HTTP/1.1 request must have a Host header');
  const te = req.headers['transfer-encoding'];
  if (te !== undefined) {
    const codings = te
      .split(',')
      .map((coding) => coding.trim().toLowerCase())
      .filter((coding) => coding !== '' && coding !== 'chunked');
    if (codings.length > 0)
      return new HermodError(
        'not_implemented',
        `Transfer-Encoding ${codings.join(', ')} is not supported: send the body as it is, chunked or with Content-Length`,
      );
  }
  return undefined;
}

/** The refusal of an `Expect` other than `100-continue` (Node answers it with an empty 417 unless told otherwise). */
export function expectationRefusal(req: IncomingMessage): HermodError {
  return new HermodError('expectation_failed', `Expect: ${req.headers.expect ?? ''} is not supported; only 100-continue is`);
}
