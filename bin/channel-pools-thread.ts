import { MessageChannel, Worker } from 'node:worker_threads';
import { Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { serveBusAndState } from '../core/adapters/thread-bridge-host';
import type { Bus } from '../core/ports/bus';
import type { HotState } from '../core/ports/state';
import type { Channel } from '../lib/channels';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/log';
import { addThreadMetrics } from '../lib/metrics';
import { entryFile } from '../lib/build-location';

export interface PoolsThreadData {
  config: Readonly<Config>;
  channels: readonly Channel[];
  logFields: Record<string, unknown>;
}
export type PoolsThreadRequest = { t: 'metrics'; id: number } | { t: 'stop' };
export type PoolsThreadMessage =
  | { t: 'ready' }
  | { t: 'failed'; message: string }
  | { t: 'stopped' }
  | { t: 'metrics'; id: number; metrics: MetricObjectWithValues<MetricValue<string>>[] };

/**
 * Starts the channel pools on a worker thread of core's process, so that the
 * SMPP sessions, receipt parsing and carrier hand-offs of the in-process bus
 * leave core's main thread to accepting messages and recording statuses. The
 * thread uses core's bus and hot state through a MessagePort bridge; its
 * metrics are served with the process's. If the thread dies, so does the
 * process (the supervisor restarts it, and the bus hands unfinished work out again).
 */
export async function startChannelPoolsThread(
  channels: readonly Channel[],
  deps: { config: Readonly<Config>; bus: Bus; state: HotState; log: Logger; logFields: Record<string, unknown> },
): Promise<{ stop(): Promise<void> }> {
  const { port1, port2 } = new MessageChannel();
  const host = serveBusAndState(port1, deps.bus, deps.state);
  const data: PoolsThreadData & { port: typeof port2 } = {
    config: deps.config,
    channels,
    logFields: { ...deps.logFields, thread: 'channel-pools' },
    port: port2,
  };
  const worker = new Worker(entryFile('channel-pools-thread-main', 'bin/channel-pools-thread-entry.js'), { workerData: data, transferList: [port2] });
  let stopping = false;
  const metricAnswers = new Map<number, (m: MetricObjectWithValues<MetricValue<string>>[]) => void>();
  let nextMetrics = 0;
  const stopped = new Promise<void>((resolve) => {
    worker.on('message', (m: PoolsThreadMessage) => {
      if (m.t === 'stopped') resolve();
      if (m.t === 'metrics') {
        metricAnswers.get(m.id)?.(m.metrics);
        metricAnswers.delete(m.id);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m: PoolsThreadMessage) => {
      if (m.t === 'ready') resolve();
      if (m.t === 'failed') reject(new Error(`channel pools failed to start: ${m.message}`));
    });
  });
  worker.on('error', (err) => deps.log.error('channel-pool thread failed', { err }));
  worker.on('exit', (code) => {
    if (stopping) return;
    deps.log.error('channel-pool thread exited; stopping the process so it is restarted', { code });
    process.exit(1);
  });

  class ThreadRegistry extends Registry {
    override getMetricsAsJSON() {
      const id = ++nextMetrics;
      return new Promise<MetricObjectWithValues<MetricValue<string>>[]>((resolve) => {
        const timer = setTimeout(() => (metricAnswers.delete(id), resolve([])), 2000);
        metricAnswers.set(id, (m) => (clearTimeout(timer), resolve(m)));
        worker.postMessage({ t: 'metrics', id } satisfies PoolsThreadRequest);
      });
    }
  }
  const removeMetrics = addThreadMetrics(new ThreadRegistry());

  return {
    async stop() {
      stopping = true;
      removeMetrics();
      worker.postMessage({ t: 'stop' } satisfies PoolsThreadRequest);
      await Promise.race([stopped, new Promise((r) => setTimeout(r, 10_000))]);
      await host.close();
      await worker.terminate();
    },
  };
}
