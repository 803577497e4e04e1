import cluster from 'node:cluster';
import { CHANNELS } from '../lib/channels';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/log';
import { answerClusterMetricRequests, enableDefaultMetrics, serveMetrics } from '../lib/metrics';
import type { BoundPorts, Role } from '../lib/role';
import { startTracing } from '../lib/tracing';
import { limitHeapGrowth } from '../lib/heap-growth';
import { requireSharedHotState } from '../lib/shared-hot-state';
import { checkGrpcTlsFiles } from '../lib/check-grpc-tls-files';

export interface RoleOptions {
  /** For `worker`: the channel whose pool it joins. */
  channel?: string;
}

interface Running {
  ports?: BoundPorts;
  stop(): Promise<void>;
}

/**
 * The composition root: the one place that knows every role's entry point and
 * wires them together. Each role is imported only when this process runs it.
 */
async function startRole(role: Role, config: Readonly<Config>, log: Logger, options: RoleOptions): Promise<Running> {
  // The roles that speak gRPC to one another: their mutual-TLS files checked before anything starts.
  if (config.grpcTls && (role === 'core' || role === 'gateway' || role === 'console')) checkGrpcTlsFiles(config.grpcTls);
  switch (role) {
    case 'gateway':
      return (await import('../gateway/gateway-main')).runGateway(config, log);
    case 'core': {
      requireSharedHotState(config, 'core');
      limitHeapGrowth(config.coreHeapGrowthPercent);
      const { runCore } = await import('../core/core-main');
      if (!config.adapters.coreRunsWorkers) return runCore(config, log);
      // The in-process bus (or HERMOD_CORE_RUNS_WORKERS): every channel's pool in core's process, on core's bus and state,
      // on a thread of its own with HERMOD_POOLS_THREAD=true.
      if (config.adapters.poolsThread) {
        const { startChannelPoolsThread } = await import('./channel-pools-thread');
        const logFields = { role, pid: process.pid };
        return runCore(config, log, { beside: ({ bus, state }) => startChannelPoolsThread(CHANNELS, { config, bus, state, log, logFields }) });
      }
      const { startChannelPools } = await import('../workers/channel-pools');
      return runCore(config, log, { beside: ({ bus, state }) => startChannelPools(CHANNELS, { config, bus, state, log }) });
    }
    case 'worker': {
      const { openBus, openState } = await import('../core/adapters/open-adapters');
      const { untilHotStateAnswers } = await import('../core/adapters/until-hot-state-answers');
      const { untilBusAnswers } = await import('../core/adapters/until-bus-answers');
      const { topicName } = await import('../core/ports/bus');
      const channel = options.channel ?? 'sms';
      return (await import('../workers/worker-main')).runWorker(config, log, channel, {
        // Answering before the carriers' logins too: a worker whose bus is away would take receipts it cannot pass on.
        openBus: async () => {
          const bus = await openBus(config.adapters, log);
          const first = channel.split(',')[0]!.trim();
          await untilBusAnswers(bus, topicName(first), `${first}-workers`, log);
          return bus;
        },
        // Answering before the carriers' logins: a worker without Redis holds a login slot it cannot use.
        openState: async () => {
          const state = await openState(config.adapters, undefined, log);
          await untilHotStateAnswers(state, log);
          return state;
        },
      });
    }
    case 'smsc-simulator':
      return (await import('../workers/simulators/smsc-main')).runSmscSimulator(config, log);
    case 'channel-simulators':
      return (await import('../workers/simulators/channel-simulators-main')).runChannelSimulators(config, log);
    case 'console':
      return (await import('../gateway/console/console-main')).runConsole(config, log);
  }
}

/**
 * Runs one role in this process. Under the supervisor (a cluster worker) the
 * supervisor decides when to stop, so a Ctrl-C or a SIGTERM that reaches the
 * whole process group (a terminal, systemd's default KillMode, `kill --
 * -PGID`) does not stop the core before the gateways in front of it; a
 * SIGTERM is told to the supervisor, which stops this role alone (and starts
 * it again) when the signal was sent to it alone. Run alone, SIGTERM and
 * SIGINT stop it after in-flight work is flushed.
 */
export async function runRole(role: Role, config: Readonly<Config>, log: Logger, options: RoleOptions = {}): Promise<void> {
  enableDefaultMetrics(options.channel ? `${role}-${options.channel}` : role);
  // Under the supervisor, listening from the start: a shutdown asked while the role still starts is kept, not lost.
  let stopAsked: string | undefined;
  let stop: (reason: string) => void = (reason) => void (stopAsked ??= reason);
  if (cluster.isWorker) {
    // The supervisor got the same signal and stops the roles in order; a worker whose supervisor is gone exits (node's cluster does so).
    process.on('SIGINT', () => undefined);
    process.on('SIGTERM', () => process.send?.({ type: 'sigterm' }));
    process.on('message', (msg: { type?: string }) => {
      if (msg?.type === 'shutdown') stop('supervisor');
    });
  }
  // The channels whose workers this process runs: a worker's own, or every one in a core that runs them.
  const maker = {
    role,
    channels: role === 'worker' ? (options.channel ?? 'sms').split(',') : role === 'core' && config.adapters.coreRunsWorkers ? CHANNELS : [],
  };
  // Run alone, its metrics port is bound first: one another process holds refuses the start before the role takes any work.
  const metrics = cluster.isWorker
    ? undefined
    : await serveMetrics({ port: config.metricsPort, host: config.host, token: config.metricsToken }, log, undefined, maker);
  const tracing = await startTracing(config.tracing, options.channel ? `${role}-${options.channel}` : role, log);
  const running = await startRole(role, config, log, options);
  let stopping = false;
  stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      log.info('stopping', { reason });
      const timer = setTimeout(() => {
        log.error('stop took too long; exiting', { graceMs: config.shutdownGraceMs });
        process.exit(1);
      }, config.shutdownGraceMs).unref();
      try {
        await running.stop();
        // The spans of the last work go out before the process does.
        await tracing.stop();
      } catch (err) {
        log.error('stop failed; exiting', { err });
        process.exit(1);
      } finally {
        clearTimeout(timer);
      }
      // Every role says it stopped, as it said it was stopping: none was cut short by its grace.
      log.info('stopped', { reason });
      process.exit(0);
    })();
  };

  if (cluster.isWorker) {
    answerClusterMetricRequests(maker);
    process.send?.({ type: 'ready', role, ports: running.ports ?? {} });
    if (stopAsked) stop(stopAsked);
  } else if (metrics) {
    log.info('metrics listening', { url: `http://${config.host}:${(metrics.address() as { port: number }).port}/metrics` });
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  }
}
