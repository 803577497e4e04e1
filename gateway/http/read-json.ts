import type { Context } from 'koa';
import { HermodError } from '../../lib/errors';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * The request body as parsed JSON, refusing what is not JSON, is malformed or
 * is larger than the limit, each with its own error code.
 */
export async function readJson(ctx: Context, maxBytes: number): Promise<unknown> {
  const type = ctx.get('content-type');
  if (type && !JSON_TYPE.test(type)) {
    throw new HermodError('unsupported_media_type', `content-type must be application/json, got ${type}`);
  }
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > maxBytes) throw new HermodError('body_too_large', `request body exceeds ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HermodError('body_too_large', `request body exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
  // Kept for the Idempotency-Key fingerprint.
  ctx.state.rawBody = text;
  if (text.trim() === '') throw new HermodError('invalid_json', 'request body is empty; a JSON object is required');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HermodError('invalid_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
}
