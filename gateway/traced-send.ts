import { carryTrace, startSpan } from '../lib/tracing';

/**
 * A message's part of the SendMessageStream batch that carries it: a client
 * span in the request's trace, kept with the message so the batch names it
 * beside the message. Off: the send itself.
 */
export function tracedSend<M extends object, R>(message: M, send: (message: M) => Promise<R>): Promise<R> {
  const span = startSpan('hermod.v1.Messaging/SendMessageStream', {
    kind: 'client',
    attributes: { 'rpc.system': 'grpc', 'rpc.service': 'hermod.v1.Messaging', 'rpc.method': 'SendMessageStream' },
  });
  if (!span) return send(message);
  carryTrace(message, span.traceparent);
  return send(message).then(
    (result) => {
      span.end();
      return result;
    },
    (err: unknown) => {
      span.end(err);
      throw err;
    },
  );
}
