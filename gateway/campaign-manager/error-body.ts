import type { Context, Next } from 'koa';
import { ERROR_CODES, toHermodError, type ErrorCode } from '../../lib/errors';
import type { Logger } from '../../lib/log';

/**
 * The only place that knows Campaign Manager's error shapes: DefaultError
 * `{code, message}` (code = the HTTP status), and plain text for delete list,
 * delete multiple lists and healthz (campaignManagerPlainErrors, by method
 * and path). Validation failures are 422, as clients expect.
 */
const STATUS: Partial<Record<ErrorCode, number>> = {
  missing_attrib: 422,
  invalid_attrib: 422,
  unprocessable: 422,
  broadcast_limit: 422,
};

/** Delete list, delete multiple lists and healthz, by method and path. */
const PLAIN_ERROR_ROUTES = [
  /^DELETE \/rest\/campaign_manager\/v1\/[^/]+\/lists\/[^/]+$/,
  /^POST \/rest\/campaign_manager\/v1\/[^/]+\/delete_multiple_lists$/,
  // Any method: a POST is answered 405, in the plain text healthz fails in.
  /^[A-Z]+ \/rest\/campaign_manager\/v1\/healthz$/,
];

/** Whether a request's errors are plain text: inside Koa, and for answers made before routing (gateway/http/header-overflow.ts). */
export const campaignManagerPlainErrors = (method: string, path: string): boolean => PLAIN_ERROR_ROUTES.some((r) => r.test(`${method} ${path}`));

/** Campaign Manager's HTTP status for an error code (the same in JSON and in plain text). */
export const campaignManagerHttpStatus = (code: ErrorCode): number => STATUS[code] ?? ERROR_CODES[code].http;

/** The error bodies as the OpenAPI document publishes them (SPEC.md §2.1 DefaultError; §4.1 the plain string). */
export const CAMPAIGN_MANAGER_ERROR_SCHEMAS = {
  DefaultError: {
    type: 'object',
    required: ['code', 'message'],
    properties: { code: { type: 'integer', description: 'The HTTP status' }, message: { type: 'string' } },
  },
  PlainError: { type: 'string', pattern: '^error: ', description: 'The plain-text error of delete list, delete multiple lists and healthz' },
};

export function campaignManagerErrors(log: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) render(ctx, 404, `no route for ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const e = toHermodError(err);
      if (e.code === 'internal') log.error('campaign manager request failed', { err, path: ctx.path });
      const status = campaignManagerHttpStatus(e.code);
      render(ctx, status, e.code === 'internal' ? 'internal error' : e.message);
      if (status === 401) ctx.set('WWW-Authenticate', 'Basic realm="hermod"');
    }
  };
}

function render(ctx: Context, status: number, message: string): void {
  ctx.status = status;
  // By method and path, so also where no route took the request (a POST to healthz, answered 405).
  if (campaignManagerPlainErrors(ctx.method, ctx.path)) {
    ctx.type = 'text/plain';
    ctx.body = `error: ${message}`;
  } else {
    ctx.body = { code: status, message };
  }
}
