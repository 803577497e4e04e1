import type { Context } from 'koa';
import { HermodError } from '../../lib/errors';
import { checkJsonRequest, JSON_ONLY, type JsonMediaTypes } from './json-request-headers';
import { decodeUtf8 } from './strict-utf8';
import { checkNoLoneSurrogates, mayHaveLoneSurrogate } from './lone-surrogate';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';
import { firstDuplicateName } from './duplicate-names';

/**
 * The request body as parsed JSON, refusing what is not JSON, is not UTF-8,
 * is malformed, holds a lone surrogate, nests deeper than MAX_JSON_DEPTH, names
 * a field twice in one object (JSON.parse would keep the last) or is larger than the limit, each with its own error code; `types` are the
 * media types the endpoint names when it refuses one.
 */
export async function readJson(ctx: Context, maxBytes: number, types: JsonMediaTypes = JSON_ONLY): Promise<unknown> {
  checkJsonRequest(ctx, maxBytes, types);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HermodError('body_too_large', `request body exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  const text = decodeUtf8(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  // Kept for the Idempotency-Key fingerprint.
  ctx.state.rawBody = text;
  if (text.trim() === '') throw new HermodError('invalid_json', 'request body is empty; a JSON object is required');
  if (nestsDeeperThan(text)) throw new HermodError('invalid_json', `request body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HermodError('invalid_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
  if (mayHaveLoneSurrogate(text)) checkNoLoneSurrogates(value, '');
  const twice = firstDuplicateName(text);
  if (twice !== undefined) throw new HermodError('invalid_json', `request body names ${JSON.stringify(twice)} twice in one object: give each field once`);
  return value;
}
