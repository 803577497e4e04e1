import type { ClientDuplexStream, ServiceError } from '@grpc/grpc-js';
import type { MessagingClient, OutboundMessage, SendBatch, SendBatchResult, SendResult } from '../proto/gen/hermod/v1/messages';
import { HermodError, isErrorCode } from '../lib/errors';
import { fromServiceError, grpcCodeName } from '../lib/grpc-errors';
import { grpcDuration } from '../lib/metrics';
import { traceOf } from '../lib/tracing';
import { CALL_TIMEOUT_MS } from './unary-call';

const METHOD = 'SendMessageStream';

export interface SendStream {
  /** One batch: resolves with a result per message, or rejects as a failed SendMessages call would. */
  send(messages: OutboundMessage[]): Promise<SendResult[]>;
  /** Ends the stream once core has answered what was sent. */
  close(): void;
}

interface Waiting {
  resolve(results: SendResult[]): void;
  reject(err: HermodError): void;
  sentAt: number;
  /** Ends the batch's timing (hermod_grpc_call_duration_seconds, one count per batch as a unary call had), by gRPC status. */
  timed(labels: { code: string }): void;
}

interface Open {
  stream: ClientDuplexStream<SendBatch, SendBatchResult>;
  waiting: Map<number, Waiting>;
}

/**
 * The gateway's end of SendMessageStream: batches go to core as messages on
 * one long-lived stream, opened on the first batch and again on the next
 * batch after it ends. Errors are the ones a unary call gave: a batch core
 * failed as a whole rejects with core's code, a stream that breaks (core
 * stopped or unreachable) rejects what it carried as `unavailable`, and a
 * batch unanswered after the call timeout rejects as `timeout`.
 */
export function createSendStream(client: MessagingClient, timeoutMs = CALL_TIMEOUT_MS): SendStream {
  let current: Open | undefined;
  let batchNumber = 0;

  const fail = (open: Open, err: HermodError): void => {
    if (current === open) current = undefined;
    const waiting = [...open.waiting.values()];
    open.waiting.clear();
    for (const w of waiting) {
      w.timed({ code: grpcCodeName(err.grpcStatus) });
      w.reject(err);
    }
  };

  const start = (): Open => {
    const open: Open = { stream: client.sendMessageStream(), waiting: new Map() };
    open.stream.on('data', (r: SendBatchResult) => {
      const w = open.waiting.get(r.batch);
      if (!w) return; // answered after its timeout
      open.waiting.delete(r.batch);
      if (!r.failure) {
        w.timed({ code: 'OK' });
        w.resolve(r.results);
        return;
      }
      const err = new HermodError(isErrorCode(r.failure.code) ? r.failure.code : 'internal', r.failure.message);
      w.timed({ code: grpcCodeName(err.grpcStatus) });
      w.reject(err);
    });
    open.stream.on('error', (err: ServiceError) => fail(open, fromServiceError(err)));
    // Core ended the stream (it is stopping): what it did not answer was not taken.
    open.stream.on('end', () => fail(open, new HermodError('unavailable', 'core is unavailable')));
    return open;
  };

  // One sweep for every batch instead of a timer each.
  const sweep = setInterval(
    () => {
      const open = current;
      if (!open) return;
      const late = Date.now() - timeoutMs;
      for (const [n, w] of open.waiting) {
        if (w.sentAt > late) continue;
        open.waiting.delete(n);
        const err = new HermodError('timeout', `core did not answer within ${timeoutMs / 1000} s`);
        w.timed({ code: grpcCodeName(err.grpcStatus) });
        w.reject(err);
      }
    },
    Math.min(1000, timeoutMs),
  );
  sweep.unref();

  return {
    send(messages) {
      current ??= start();
      const open = current;
      batchNumber += 1;
      const batch = batchNumber;
      return new Promise<SendResult[]>((resolve, reject) => {
        open.waiting.set(batch, { resolve, reject, sentAt: Date.now(), timed: grpcDuration.startTimer({ side: 'client', method: METHOD }) });
        open.stream.write({ batch, messages, traceparents: messages.map((m) => traceOf(m) ?? '') });
      });
    },
    close() {
      clearInterval(sweep);
      current?.stream.end();
      current = undefined;
    },
  };
}
