import type { MessagePort } from 'node:worker_threads';
import { type BatchHandler, type Bus, type DeliveredRecord, valueBytes } from '../ports/bus';
import type { HotState } from '../ports/state';
import { type ClientMessage, type HostMessage, STATE_METHODS, type StateMethod, asBuffer, fromWireError, toWireError } from './thread-bridge-protocol';

type Call = ClientMessage extends infer M ? (M extends { id: number } ? Omit<M, 'id'> : never) : never;

/**
 * The bus and hot state of another thread, reached over `port`
 * (thread-bridge-host.ts serves them there). Every call is a message and its
 * answer; batches arrive as messages and are settled when the handler is.
 * close() of either ends only what this thread opened; the owner closes the real ones.
 */
export function connectBusAndState(port: MessagePort): { bus: Bus; state: HotState; close(): Promise<void> } {
  const calls = new Map<number, { resolve(v: unknown): void; reject(err: Error): void }>();
  const handlers = new Map<number, BatchHandler>();
  let nextId = 0;
  let nextSub = 0;
  const call = <T>(message: Call): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++nextId;
      calls.set(id, { resolve: resolve as (v: unknown) => void, reject });
      port.postMessage({ ...message, id } as ClientMessage);
    });

  port.on('message', (m: HostMessage) => {
    if (m.t === 'result') {
      const waiting = calls.get(m.id);
      calls.delete(m.id);
      if (m.error) waiting?.reject(fromWireError(m.error));
      else waiting?.resolve(m.value);
      return;
    }
    const handler = handlers.get(m.sub);
    const records: DeliveredRecord[] = m.records.map((r) => ({ ...r, value: asBuffer(r.value) }));
    const settle = (error?: unknown): void => port.postMessage({ t: 'settled', batch: m.batch, ...(error === undefined ? {} : { error: toWireError(error) }) });
    if (!handler) return settle(new Error('no longer subscribed'));
    handler(records).then(
      () => settle(),
      (err) => settle(err ?? new Error('handler failed')),
    );
  });

  const bus: Bus = {
    publish: (topic, records, options) =>
      call({ t: 'publish', topic, records: records.map((r) => ({ key: r.key, value: valueBytes(r.value) })), ...(options ? { options } : {}) }),
    async subscribe(topic, handler, options) {
      const sub = ++nextSub;
      handlers.set(sub, handler);
      await call({ t: 'subscribe', sub, topic, options });
      return {
        async close() {
          await call({ t: 'unsubscribe', sub });
          handlers.delete(sub);
        },
      };
    },
    lag: (topic, group) => call<number>({ t: 'lag', topic, group }),
    close: async () => undefined,
  };

  const state = Object.fromEntries(
    STATE_METHODS.map((method: StateMethod) => [method, (...args: unknown[]) => call({ t: 'state', method, args })]),
  ) as unknown as Omit<HotState, 'close'>;

  return {
    bus,
    state: { ...state, close: async () => undefined },
    async close() {
      await Promise.all([...handlers.keys()].map((sub) => call({ t: 'unsubscribe', sub }).catch(() => undefined)));
      handlers.clear();
      port.close();
    },
  };
}
