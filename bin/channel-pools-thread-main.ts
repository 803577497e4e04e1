import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { register } from 'prom-client';
import { connectBusAndState } from '../core/adapters/thread-bridge-client';
import type { Channel } from '../lib/channels';
import type { Config } from '../lib/config';
import { createLogger, setLogLevel } from '../lib/log';
import { startTracing } from '../lib/tracing';
import { startChannelPools } from '../workers/channel-pools';
import type { PoolsThreadData, PoolsThreadMessage, PoolsThreadRequest } from './channel-pools-thread';

/**
 * Core's channel pools on a thread of their own: they meet core's in-process
 * bus and hot state through the bridge on `workerData.port`, exactly as
 * worker processes meet Redis or Kafka, and answer core's requests for their metrics.
 */
const data = workerData as PoolsThreadData & { port: MessagePort };
const config = data.config as Readonly<Config>;
setLogLevel(config.logLevel);
const log = createLogger(data.logFields);
const bridge = connectBusAndState(data.port);
const post = (m: PoolsThreadMessage): void => parentPort!.postMessage(m);

try {
  // A thread has its own modules: spans of the pools need a tracer of their own (off unless an OTLP endpoint is set).
  const tracing = await startTracing(config.tracing, 'core-channel-pools', log);
  const pools = await startChannelPools(data.channels as Channel[], { config, bus: bridge.bus, state: bridge.state, log });
  parentPort!.on('message', async (m: PoolsThreadRequest) => {
    if (m.t === 'metrics') {
      post({ t: 'metrics', id: m.id, metrics: await register.getMetricsAsJSON() });
      return;
    }
    try {
      await pools.stop();
      await bridge.close();
      await tracing.stop();
    } finally {
      post({ t: 'stopped' });
    }
  });
  post({ t: 'ready' });
} catch (err) {
  log.error('channel pools failed to start', { err });
  post({ t: 'failed', message: err instanceof Error ? err.message : String(err) });
}
