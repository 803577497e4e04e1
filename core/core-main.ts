import type { Config } from '../lib/config';
import type { Logger } from '../lib/log';
import path from 'node:path';
import { createChdbHistory } from './adapters/chdb-history';
import { createJournaledHistory } from './history/journaled-history';
import { createMemoryBus } from './adapters/memory-bus';
import { createMemoryState } from './adapters/memory-state';
import { createAccounts } from './accounts/accounts';
import { bindServer, createCoreGrpcServer } from './grpc/core-grpc-server';
import { createMessageIntake } from './messages/message-intake';
import { createMessageReader } from './messages/message-reader';
import { createRecentMessages } from './messages/recent-messages';
import { recoverUnfinished } from './messages/recovery';
import { startStatusConsumer } from './messages/status-consumer';
import { createStatusRecorder } from './messages/status-recorder';
import { startSmsWorkerPool } from '../workers/sms/sms-worker-pool';

export interface RunningCore {
  port: number;
  stop(): Promise<void>;
}

/**
 * The core role on the embedded adapters: gRPC for the gateways, the
 * in-process bus and hot state, history in chDB, and (because the bus is in
 * this process) the SMS worker pool beside it.
 */
export async function runCore(config: Readonly<Config>, log: Logger): Promise<RunningCore> {
  const history = await createJournaledHistory({
    inner: await createChdbHistory({ dataDir: config.dataDir }),
    dir: path.join(config.dataDir, 'journal'),
    log,
    flushIntervalMs: config.historyFlushMs,
    fsync: config.journalFsync,
  });
  const state = createMemoryState();
  const bus = createMemoryBus({ partitions: 16 });
  const recorder = createStatusRecorder({ history, state });
  const recent = createRecentMessages();
  const intake = createMessageIntake({
    history, state, bus, recorder, recent,
    // The message is durable; recovery at the next start hands it over again.
    onDispatchError: (err) => log.error('could not hand accepted messages to their channel', { err }),
  });
  const reader = createMessageReader({ history, state, recent });
  const accounts = createAccounts({ history });

  if (config.bootstrap) {
    const app = await accounts.upsert({ name: config.bootstrap.app, password: config.bootstrap.password, apiKey: config.bootstrap.apiKey });
    log.info('bootstrap application ready', { application: app.name });
  }

  const statusSubscription = await startStatusConsumer({ bus, state, history, recorder, log });
  const sms = await startSmsWorkerPool({ config: config.smpp, bus, state, log });
  await recoverUnfinished({ history, state, intake, log });

  const server = createCoreGrpcServer({ intake, reader, accounts });
  const port = await bindServer(server, config.coreAddress);
  log.info('core listening', { grpc: config.coreAddress.replace(/:\d+$/, `:${port}`), dataDir: config.dataDir });

  return {
    port,
    async stop() {
      // Refuse new calls, finish the ones in progress, then let the pipeline run dry.
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await intake.drain();
      await sms.stop();
      await statusSubscription.close();
      await recorder.drain();
      await bus.close();
      await state.close();
      await history.close();
      log.info('core stopped');
    },
  };
}
