import type { MessagePort } from 'node:worker_threads';
import { type Bus, type Subscription, valueBytes } from '../ports/bus';
import type { HotState } from '../ports/state';
import { type ClientMessage, type HostMessage, STATE_METHODS, asBuffer, fromWireError, toWireError } from './thread-bridge-protocol';

/**
 * Serves this thread's bus and hot state to another thread over `port`
 * (the other end holds a thread bus and a thread state). A batch handed to the
 * other thread is acknowledged on the bus only when that thread's handler
 * resolves, so at-least-once delivery holds across the hop. close() ends the
 * other thread's subscriptions; the bus and state stay open (their owner closes them).
 */
export function serveBusAndState(port: MessagePort, bus: Bus, state: HotState): { close(): Promise<void> } {
  const subscriptions = new Map<number, Promise<Subscription>>();
  const batches = new Map<number, { resolve(): void; reject(err: Error): void }>();
  const stateMethods = new Set<string>(STATE_METHODS);
  let nextBatch = 0;
  const post = (m: HostMessage): void => port.postMessage(m);
  const answer = (id: number, work: () => Promise<unknown>): void => {
    work().then(
      (value) => post({ t: 'result', id, value }),
      (err) => post({ t: 'result', id, error: toWireError(err) }),
    );
  };

  port.on('message', (m: ClientMessage) => {
    switch (m.t) {
      case 'publish':
        answer(m.id, () =>
          bus.publish(
            m.topic,
            m.records.map((r) => ({ key: r.key, value: asBuffer(r.value) })),
            m.options,
          ),
        );
        return;
      case 'subscribe': {
        const subscribed = bus.subscribe(
          m.topic,
          (records) =>
            new Promise<void>((resolve, reject) => {
              const batch = ++nextBatch;
              batches.set(batch, { resolve, reject });
              post({ t: 'batch', batch, sub: m.sub, records: records.map((r) => ({ ...r, value: valueBytes(r.value) })) });
            }),
          m.options,
        );
        subscriptions.set(m.sub, subscribed);
        answer(m.id, async () => void (await subscribed));
        return;
      }
      case 'unsubscribe': {
        const subscribed = subscriptions.get(m.sub);
        subscriptions.delete(m.sub);
        answer(m.id, async () => (await subscribed)?.close());
        return;
      }
      case 'lag':
        answer(m.id, () => bus.lag(m.topic, m.group));
        return;
      case 'state':
        answer(m.id, async () => {
          if (!stateMethods.has(m.method)) throw new Error(`no hot-state method ${m.method}`);
          return (state[m.method] as (...args: unknown[]) => Promise<unknown>).apply(state, m.args);
        });
        return;
      case 'settled': {
        const waiting = batches.get(m.batch);
        batches.delete(m.batch);
        if (m.error) waiting?.reject(fromWireError(m.error));
        else waiting?.resolve();
        return;
      }
    }
  });

  return {
    async close() {
      const open = [...subscriptions.values()];
      subscriptions.clear();
      // Batches the other thread will never settle go back to the bus, to be handed out again.
      for (const waiting of batches.values()) waiting.reject(new Error('the thread holding this batch stopped'));
      batches.clear();
      await Promise.all(open.map(async (s) => (await s).close()));
      port.close();
    },
  };
}
