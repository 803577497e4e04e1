import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { OutboundMessage, SendBatch, SendBatchResult, SendResult } from '../../proto/gen/hermod/v1/messages';
import { toHermodError } from '../../lib/errors';
import { timeServerCall } from './unary-handler';

type SendCall = ServerDuplexStream<SendBatch, SendBatchResult>;

export interface SendStreams {
  /** Serves one gateway's SendMessageStream: each batch is sent and answered with its number. */
  handle(call: SendCall): void;
  /**
   * Takes no more batches, answers those in hand, then ends every stream, and
   * ends any stream opened afterwards at once. A graceful gRPC shutdown waits
   * for every open call, and a gateway's stream stays open for as long as
   * both sides live: without this, core's stop would wait forever.
   */
  close(): Promise<void>;
}

/**
 * Core's end of SendMessageStream. A batch that fails as a whole (what a
 * unary SendMessages call would answer with an error status) is answered
 * with `failure`, so the gateway raises the same HermodError for each of its
 * requests. Batches that arrive once closing has begun are not taken: the
 * gateway hears the stream end and answers those requests `unavailable`,
 * nothing of them stored.
 */
export function createSendStreams(send: (messages: OutboundMessage[], traces: (string | undefined)[]) => Promise<SendResult[]>): SendStreams {
  const open = new Set<SendCall>();
  const inFlight = new Set<Promise<void>>();
  let closing = false;

  const finish = (call: SendCall): void => {
    if (!open.delete(call)) return;
    if (!call.cancelled) call.end();
  };

  return {
    handle(call) {
      if (closing) {
        call.end();
        return;
      }
      open.add(call);
      const mine = new Set<Promise<void>>();
      let halfClosed = false;
      const answer = (result: SendBatchResult): void => {
        if (open.has(call) && !call.cancelled) call.write(result);
      };
      call.on('data', (batch: SendBatch) => {
        if (closing || !open.has(call)) return;
        const end = timeServerCall('SendMessageStream');
        const traces = batch.messages.map((_, i) => batch.traceparents[i] || undefined);
        const work = send(batch.messages, traces).then(
          (results) => {
            end();
            answer({ batch: batch.batch, results, failure: undefined });
          },
          (err: unknown) => {
            end(err);
            const e = toHermodError(err);
            answer({ batch: batch.batch, results: [], failure: { code: e.code, message: e.message } });
          },
        );
        inFlight.add(work);
        mine.add(work);
        void work.finally(() => {
          inFlight.delete(work);
          mine.delete(work);
          if (halfClosed && mine.size === 0) finish(call);
        });
      });
      // The gateway is stopping: answer what it sent, then end our side too.
      call.on('end', () => {
        halfClosed = true;
        if (mine.size === 0) finish(call);
      });
      call.on('error', () => open.delete(call));
      call.on('cancelled', () => open.delete(call));
    },
    async close() {
      closing = true;
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      for (const call of [...open]) finish(call);
    },
  };
}
