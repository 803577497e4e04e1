import kafkajs from 'kafkajs';
import type { KafkaJSProtocolError as ProtocolError } from 'kafkajs';
import { HermodError, toHermodError, type ErrorCode } from '../../lib/errors';

// kafkajs is CommonJS and spreads its error classes into module.exports, which
// Node's ESM loader cannot see as named exports: take them from the default export.
const { KafkaJSError, KafkaJSProtocolError } = kafkajs;

/** Protocol error types (Kafka's own stable names) that mean something other than "try later". */
const PROTOCOL_CODES: Readonly<Record<string, ErrorCode>> = {
  TOPIC_AUTHORIZATION_FAILED: 'forbidden',
  GROUP_AUTHORIZATION_FAILED: 'forbidden',
  CLUSTER_AUTHORIZATION_FAILED: 'forbidden',
  UNKNOWN_TOPIC_OR_PARTITION: 'not_found',
  INVALID_TOPIC_EXCEPTION: 'invalid_attrib',
  MESSAGE_TOO_LARGE: 'body_too_large',
  RECORD_LIST_TOO_LARGE: 'body_too_large',
};

/**
 * A kafkajs failure as a HermodError, so nothing above the bus port sees a
 * kafkajs shape. The code comes from the innermost Kafka protocol error when
 * there is one; otherwise a failure kafkajs counts as passing (a broker away,
 * a leader being elected) is `unavailable`, and stays so once kafkajs gave
 * up retrying it. `retryable` follows the code, not kafkajs's `retriable`
 * (false once kafkajs gave up): a callback or status report must be tried
 * again until the broker is back, not held until core's next start.
 */
export function toKafkaBusError(err: unknown, doing: string): HermodError {
  if (err instanceof HermodError) return err;
  // kafkajs failing in its own code (a TypeError) still says that it was Kafka, and doing what.
  if (!(err instanceof KafkaJSError)) return new HermodError('internal', `Kafka ${doing} failed: ${toHermodError(err).message}`, { cause: err });
  const protocol = innermostProtocolError(err);
  // "Gave up retrying" is still a failure of the cluster's availability, not of the request.
  const code = (protocol && PROTOCOL_CODES[protocol.type]) ?? (chain(err).some((e) => e instanceof KafkaJSError && e.retriable) ? 'unavailable' : 'internal');
  return new HermodError(code, `Kafka ${doing} failed: ${err.message}`, { cause: err });
}

/** The error and its causes, outermost first. */
function chain(err: unknown): Error[] {
  const errors: Error[] = [];
  for (let e: unknown = err; e instanceof Error && errors.length < 8; e = e.cause) errors.push(e);
  return errors;
}

const innermostProtocolError = (err: unknown): ProtocolError | undefined => chain(err).findLast((e): e is ProtocolError => e instanceof KafkaJSProtocolError);

/** A Kafka protocol error of this type, or a kafkajs error that gave up on one, (Kafka's stable error name, e.g. UNKNOWN_TOPIC_OR_PARTITION). */
export const isKafkaProtocolError = (err: unknown, type: string): boolean => innermostProtocolError(err)?.type === type;
