import { status as GrpcStatus } from '@grpc/grpc-js';
import { ERROR_CODES, type ErrorCode } from '../lib/errors';
import { smsV2HttpStatus } from './sms-v2/error-body';
import { gatewayV1ErrorName, gatewayV1HttpStatus } from './gateway-v1/error-body';
import { campaignManagerHttpStatus } from './campaign-manager/error-body';
import { intelligentMessagingHttpStatus } from './intelligent-messaging/error-body';

/** What each code means, for people; the compiler insists on one per code. */
const MEANING: Record<ErrorCode, string> = {
  invalid_json: 'The body is empty, not JSON, or not UTF-8',
  missing_attrib: 'A required field is missing',
  invalid_attrib: 'A field (or parameter, or header) has a value that is not allowed',
  unsupported_media_type:
    'The Content-Type is not JSON, is sent more than once (or, on Intelligent Messaging, not at all), its charset is not UTF-8, or the body is compressed (a Content-Encoding other than identity)',
  broadcast_limit: 'A v1 broadcast names more destinations than allowed',
  body_too_large: 'The body is larger than allowed',
  headers_too_large: "The request's head (request line and headers) is larger than 16 KB; the connection is closed",
  expectation_failed: 'The request has an Expect other than 100-continue, which hermod does not meet',
  not_implemented: 'The body comes in a transfer coding besides chunked (gzip, deflate), which hermod does not decode',
  request_timeout:
    'The body stopped arriving for HERMOD_REQUEST_IDLE_TIMEOUT, or came slower than HERMOD_REQUEST_MIN_RATE after that long; the connection is closed',
  unauthorized: 'Credentials are missing or wrong',
  forbidden: "Not allowed: another application's resource, a refused webhook verification, a private callback address",
  not_found: 'No such message, list, campaign, route or link',
  method_not_allowed: 'The path exists, the method does not',
  conflict: 'A request with the same Idempotency-Key is still running, or an address another application has claimed',
  unprocessable:
    'Well formed but cannot be carried out: an Idempotency-Key reused with another request, no attempt can reach the destination, nothing left of a list',
  rate_limited: 'The application sent more requests per second than its limit',
  too_many_auth_failures:
    "Too many wrong credentials from the client's address or for the application named: refused, the right password too, until `Retry-After` seconds have passed",
  quota_exceeded: "The application's message quota for the period is used up (Gateway v1 only; v2 accepts and ends the message deficient)",
  unavailable: 'Something hermod needs (core, history, a callback receiver) cannot be reached just now',
  timeout: 'Something hermod waited for (core, an SMSC) did not answer in time',
  carrier_rejected: 'The carrier refused the message for good',
  carrier_transient: 'The carrier failed for now (unreachable, throttled, not bound)',
  internal: 'A failure hermod did not foresee (logged; the answer says only "internal error")',
};

const HEADER = `# Errors

Every failure in hermod is a \`HermodError\` with one of the codes below
(lib/errors.ts). Each interface renders it in its own body shape and
decides its HTTP status; gRPC callers get the gRPC status; retry logic reads
only the retryable flag.

| Interface | Error body |
| --- | --- |
| SMS Gateway v2 | \`{"message", "statusCode", "error"}\` (\`error\`: the status's reason phrase) |
| Gateway v1 | \`{"message", "code", "error", "error-desc"}\` (\`code\`: the HTTP status; \`error\`: the v1 name below) |
| Campaign Manager | \`{"code", "message"}\`; delete list, delete multiple lists and healthz answer \`error: <message>\` as text/plain |
| Intelligent Messaging | \`{"code", "message", "errors": [{"field", "code", "description"}], "statusCode", "error"}\` |

Each interface's OpenAPI document (\`<prefix>/openapi.yaml\`) describes the same bodies.

`;

/**
 * docs/errors.md: every error code with its HTTP status on each interface (as
 * that interface's error renderer decides it), gRPC status and retryable
 * flag. Written by `npm run docs:errors`; a test fails when the file and the
 * code disagree.
 */
export function errorsTable(): string {
  const rows = (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => {
    const { grpc, retryable } = ERROR_CODES[code];
    return [
      `\`${code}\``,
      MEANING[code],
      smsV2HttpStatus(code),
      gatewayV1HttpStatus(code),
      `\`${gatewayV1ErrorName(code)}\``,
      campaignManagerHttpStatus(code),
      intelligentMessagingHttpStatus(code),
      `${GrpcStatus[grpc]} (${grpc})`,
      retryable ? 'yes' : 'no',
    ];
  });
  const head = ['Code', 'Meaning', 'v2 HTTP', 'v1 HTTP', 'v1 `error`', 'Campaign Manager HTTP', 'IM HTTP', 'gRPC status', 'Retryable'];
  const line = (cells: unknown[]) => `| ${cells.join(' | ')} |`;
  return HEADER + [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n') + '\n\nGenerated from the code by `npm run docs:errors`.\n';
}
