import { childExecArgv } from './heap-growth';
import { entryFile } from './build-location';
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { ConfigError, type Config } from './config';
import type { Logger } from './log';
import { pointServiceAccountKeyAt, writeServiceAccountKey } from './service-account-key';
import type { BoundPorts, Role } from './role';
import { serveMetrics } from './metrics';
import { createClusterMetrics } from './cluster-metrics';
import { CHANNELS, type Channel } from './channels';
import { mallocEnv } from './malloc-env';
import { requireSharedHotState } from './shared-hot-state';
import { checkGrpcTlsFiles } from './check-grpc-tls-files';

/** How long after its grace a role that has not exited is killed (its own timer ends it at the grace). */
const STOP_OVERDUE_MS = 5_000;

const ENTRY = entryFile('hermod', 'bin/hermod.js');
const RESTART_DELAY_MS = 1000;
/** How long after a role says it got SIGTERM the supervisor waits to see whether it got the signal too (sent to the whole group). */
const GROUP_SIGNAL_WINDOW_MS = 300;

/**
 * The worker processes `hermod start` runs, each as the channels it serves:
 * none when core runs the pools (always with the in-process bus), else SMS
 * in a process of its own (the busy one, with its SMPP binds) and the other
 * channels together in one more. A Node process costs about 95 MB resident
 * before any work, and one per quiet channel was 285 MB of the service's
 * memory for nothing (bench/RESULTS.md, sixth session); at scale each
 * channel still runs as its own processes (`hermod worker --channel`).
 * Workers in their own processes share core's hot state only through Redis,
 * so an external bus with in-process state and workers outside core is
 * refused (lib/shared-hot-state.ts).
 */
export function workerProcesses(config: Readonly<Config>): readonly (readonly Channel[])[] {
  requireSharedHotState(config, 'core');
  if (config.adapters.coreRunsWorkers) return [];
  return [['sms'], CHANNELS.filter((c) => c !== 'sms')];
}

/**
 * `hermod start`: the whole service on one machine. Starts the simulators,
 * then core, then one worker per channel (unless core runs them), then one
 * gateway per CPU core; restarts a process that dies; serves the metrics of
 * all of them on one port; on SIGTERM or Ctrl-C stops the gateways first,
 * then core, then the workers, so in-flight work is flushed.
 */
const STOP_ORDER: readonly Role[] = ['console', 'gateway', 'core', 'worker', 'smsc-simulator', 'channel-simulators'];

export async function runSupervisor(config: Readonly<Config>, log: Logger): Promise<void> {
  let channels: readonly (readonly Channel[])[];
  try {
    channels = workerProcesses(config);
    // Refused here once, rather than by every role that speaks gRPC as it is forked.
    if (config.grpcTls) checkGrpcTlsFiles(config.grpcTls);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
  // V8 sizes a process's young generation as it starts: core's own size goes in its node options alone.
  const execArgv = (role: Role): string[] =>
    childExecArgv(process.execArgv, process.env.NODE_OPTIONS, role === 'core' ? config.coreSemiSpaceMb : config.semiSpaceMb);
  const secrets = simulatorWebhookSecrets(config);
  // Decided once here, from the ports asked for: every process learns the simulators' bound ports later, which would change it.
  const malloc = mallocEnv(process.env);
  const bounces = config.channels.email.bounceListener ? { HERMOD_BOUNCE_SMTP_PORT: String(config.channels.email.bounceListener.port) } : {};
  const workers = new Map<Worker, { role: Role; index: number; channel?: string }>();
  /** Roles that said they are ready: only these listen for the supervisor's messages (one sent earlier is lost). */
  const ready = new WeakSet<Worker>();
  /** The processes (by their metrics' name) that died and are to be started again. */
  const restarting = new Set<string>();
  const bound = createBoundAddresses(config);
  let stopping = false;
  /** Every role started once. */
  let started = false;

  /** `channel`: for a worker, the channels it serves, comma-separated. */
  const fork = (role: Role, index: number, channel?: string): Promise<Worker> => {
    cluster.setupPrimary({ exec: ENTRY, args: [], execArgv: execArgv(role) });
    const worker = cluster.fork({
      ...malloc,
      ...secrets,
      ...bounces,
      ...bound.env(
        role,
        [...workers.values()].some((w) => w.role === 'gateway'),
      ),
      HERMOD_ROLE: role,
      HERMOD_ROLE_INDEX: String(index),
      ...(channel ? { HERMOD_CHANNEL: channel } : {}),
    });
    workers.set(worker, { role, index, channel });
    restarting.delete(processName({ role, index, channel }));
    return new Promise((resolve, reject) => {
      const onMessage = (msg: { type?: string; ports?: BoundPorts }) => {
        if (msg?.type === 'ready') {
          ready.add(worker);
          worker.off('exit', onEarlyExit);
          bound.record(msg.ports ?? {});
          resolve(worker);
        }
      };
      // Exit code 2: the role refused a setting, and its own line says which; hermod does not start.
      const onEarlyExit = (code: number) =>
        reject(
          code === 2 ? new ConfigError(`hermod not started: ${role} refused its configuration`) : new Error(`${role} exited with code ${code} while starting`),
        );
      worker.on('message', onMessage);
      worker.once('exit', onEarlyExit);
    });
  };

  /** Roles stopped by a SIGTERM sent to them alone: started again like one that died, but it is no error. */
  const terminated = new WeakSet<Worker>();
  cluster.on('message', (worker, msg: { type?: string }) => {
    if (msg?.type !== 'sigterm') return;
    // The same signal to the whole process group reaches this process too, and then it stops every role in order.
    setTimeout(() => {
      const info = workers.get(worker);
      if (stopping || !info || worker.isDead()) return;
      log.info('a role was sent SIGTERM alone; stopping it and starting it again', { role: info.role, channel: info.channel, pid: worker.process.pid });
      terminated.add(worker);
      worker.send({ type: 'shutdown' }, undefined, undefined, () => undefined);
    }, GROUP_SIGNAL_WINDOW_MS);
  });

  cluster.on('exit', (worker, code, signal) => {
    const info = workers.get(worker);
    workers.delete(worker);
    if (!info || stopping) return;
    // A role refusing its configuration at the first start stops hermod (above); a restart is retried as before.
    if (!started && code === 2) return;
    // Stopped as asked, or it failed to stop cleanly (its grace ran out, or it was killed meanwhile).
    if (terminated.has(worker) && code === 0 && !signal) log.info('process stopped; restarting', { role: info.role, channel: info.channel, code });
    else log.error('process died; restarting', { role: info.role, channel: info.channel, code, signal });
    restarting.add(processName(info));
    setTimeout(() => {
      if (!stopping) fork(info.role, info.index, info.channel).catch((err) => log.error('restart failed', { role: info.role, channel: info.channel, err }));
    }, RESTART_DELAY_MS);
  });

  /** Resolves once the role said it is ready, or is gone; one still starting after the stop's grace is killed (it has taken no work yet). */
  const startedOrGone = (w: Worker): Promise<void> =>
    new Promise<void>((resolve) => {
      if (ready.has(w) || w.isDead()) return resolve();
      const timer = setTimeout(() => {
        log.error('a role still starting at the stop was killed', { role: workers.get(w)?.role, pid: w.process.pid });
        w.process.kill('SIGKILL');
      }, config.shutdownGraceMs);
      const done = (): void => {
        clearTimeout(timer);
        w.off('message', onMessage);
        resolve();
      };
      const onMessage = (msg: { type?: string }): void => void (msg?.type === 'ready' && done());
      w.on('message', onMessage);
      w.once('exit', done);
    });

  const stopRole = async (role: Role): Promise<void> => {
    const exits = [...workers]
      .filter(([, i]) => i.role === role)
      .map(async ([w]) => {
        // A role restarted a moment ago may still be starting: asked to stop only once it listens.
        await startedOrGone(w);
        await new Promise<void>((resolve) => {
          if (w.isDead()) return resolve();
          // A role stops itself within its grace; one that cannot run even its own timer (stopped, thrashing at its
          // heap limit) is killed a little after, or hermod would wait on it for good.
          const overdue = setTimeout(() => {
            if (w.isDead()) return;
            log.error('role did not stop within its grace; killing it', { role, pid: w.process.pid, graceMs: config.shutdownGraceMs });
            w.process.kill('SIGKILL');
          }, config.shutdownGraceMs + STOP_OVERDUE_MS);
          w.once('exit', () => {
            clearTimeout(overdue);
            resolve();
          });
          // One that died meanwhile has no channel left (EPIPE): its exit resolves this, or already did.
          w.send({ type: 'shutdown' }, undefined, undefined, (err: Error | null) => {
            if (err && w.isDead()) resolve();
          });
        });
      });
    await Promise.all(exits);
  };

  /** Every role, in the order that lets each flush into the next: the gateways first, the simulators last. */
  const stopAll = async (): Promise<void> => {
    stopping = true;
    for (const role of STOP_ORDER) await stopRole(role);
  };

  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    log.info('stopping hermod', { signal });
    await stopAll();
    log.info('hermod stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  // With a carriers file, the simulated carriers are the SMSC simulators; without one, HERMOD_SMSC_SIMULATOR decides.
  const simulatedCarriers = config.carriers.carriers.filter((c) => c.simulated).map((c) => `${c.name} smpp://${c.host}:${c.port}`);
  const smscSimulator = config.carriers.file ? simulatedCarriers.length > 0 : config.simulator.enabled;
  let metrics: Awaited<ReturnType<typeof serveMetrics>>;
  try {
    if (smscSimulator) await fork('smsc-simulator', 0);
    if (config.channelSimulators.enabled) {
      await fork('channel-simulators', 0);
      // A simulator on port 0: its key names the port it got (read by the workers at their first RCS send).
      const rbmKey = secrets.HERMOD_RCS_SERVICE_ACCOUNT;
      if (rbmKey && config.channelSimulators.rcsPort === 0 && bound.ports.rcs) pointServiceAccountKeyAt(rbmKey, `http://127.0.0.1:${bound.ports.rcs}/token`);
    }
    await fork('core', 0);
    await Promise.all(channels.map((served) => fork('worker', 0, served.join(','))));
    await Promise.all(Array.from({ length: config.gateways }, (_, i) => fork('gateway', i)));
    // The operator console only behind a password: without one it is not started, and the log says why.
    if (config.admin.password) await fork('console', 0);
    else log.warn('operator console not started: HERMOD_ADMIN_PASSWORD is not set (set it, and HERMOD_ADMIN_USER, to serve the console)');
    metrics = await serveMetrics(
      { port: config.metricsPort, host: config.host, token: config.metricsToken },
      log,
      createClusterMetrics(() => [
        ...[...workers].map(([worker, info]) => ({ worker, name: processName(info), ready: ready.has(worker) })),
        // Between its death and its restart a role still has its sample (0), so an alert on one that keeps dying fires.
        ...[...restarting].map((name) => ({ name, ready: false })),
      ]),
    );
  } catch (err) {
    // A role that could not start, or the metrics port taken: the roles running are stopped before hermod exits, so that nothing it
    // started outlives it holding a port (a restart by systemd or by hand would find it taken).
    if (!stopping) await stopAll();
    throw err;
  }
  started = true;
  const https = bound.ports.https ?? config.httpsPort;
  for (const [worker, info] of workers) if (info.role === 'channel-simulators') worker.send({ type: 'gateways-listening', https });
  log.info('hermod is running', {
    https: `https://${config.host}:${https}`,
    http: `http://${config.host}:${bound.ports.http ?? config.httpPort}`,
    metrics: `http://${config.host}:${(metrics.address() as { port: number }).port}/metrics`,
    core: bound.coreAddress(),
    ...(!config.carriers.file && config.simulator.enabled ? { smpp: `smpp://${config.simulator.host}:${bound.ports.smpp}` } : {}),
    ...(config.carriers.file ? { carriers: config.carriers.carriers.map((c) => c.name), simulatedCarriers } : {}),
    ...(bound.ports.admin !== undefined
      ? { console: `http://${config.admin.host.includes(':') ? `[${config.admin.host}]` : config.admin.host}:${bound.ports.admin}/` }
      : {}),
    gateways: config.gateways,
    workers: channels.length > 0 ? channels.map((served) => served.join(',')) : 'in core',
    dataDir: config.dataDir,
  });
}

/**
 * Where each role listens, as the roles report it in their ready message: a
 * port configured as 0 becomes the one the system gave, and every process
 * forked after that (a restart too) is told the real one, so the gateways
 * reach core, core and the workers reach the simulators, and a role that
 * restarts comes back where it was. The gateways are the exception: they share
 * their ports through the cluster, which keys a shared port by the port asked
 * for, so a gateway joining running ones asks for what they asked for (0
 * included); only when none is running does it ask for the port they had.
 */
export function createBoundAddresses(config: Readonly<Config>) {
  const ports: BoundPorts = {};
  const known: Record<string, string> = {};
  let gatewayPorts: Record<string, string> = {};
  const VARIABLES: [keyof BoundPorts, string][] = [
    ['smpp', 'HERMOD_SMSC_PORT'],
    ['smtp', 'HERMOD_SMTP_SINK_PORT'],
    ['wab', 'HERMOD_WAB_SIMULATOR_PORT'],
    ['rcs', 'HERMOD_RCS_SIMULATOR_PORT'],
    ['mms', 'HERMOD_MMS_SIMULATOR_PORT'],
    ['https', 'HERMOD_HTTPS_PORT'],
    ['http', 'HERMOD_HTTP_PORT'],
    ['admin', 'HERMOD_ADMIN_PORT'],
  ];
  const coreAddress = (): string => (ports.grpc === undefined ? config.coreAddress : config.coreAddress.replace(/:\d+$/, `:${ports.grpc}`));
  return {
    ports,
    coreAddress,
    record(reported: BoundPorts): void {
      Object.assign(ports, reported);
      for (const [name, variable] of VARIABLES) if (reported[name] !== undefined) known[variable] = String(reported[name]);
      if (reported.grpc !== undefined) known.HERMOD_CORE_ADDRESS = coreAddress();
    },
    /** The variables a role is forked with; `gatewaysRunning`: whether any gateway process is alive. */
    env(role: Role, gatewaysRunning: boolean): Record<string, string> {
      if (role !== 'gateway') return { ...known };
      const { HERMOD_HTTPS_PORT, HERMOD_HTTP_PORT, ...rest } = known;
      if (!gatewaysRunning) gatewayPorts = HERMOD_HTTPS_PORT && HERMOD_HTTP_PORT ? { HERMOD_HTTPS_PORT, HERMOD_HTTP_PORT } : {};
      return { ...rest, ...gatewayPorts };
    },
  };
}

/**
 * The simulated carriers and the gateways that verify their webhooks share a
 * secret made for this start only, and hermod and the RBM simulator a
 * service-account key; a secret or key an operator set is kept.
 */
function simulatorWebhookSecrets(config: Readonly<Config>): Record<string, string> {
  if (!config.channelSimulators.enabled) return {};
  const secrets: Record<string, string> = {};
  for (const [channel, carrier] of Object.entries({ WAB: config.channels.wab, RCS: config.channels.rcs, MMS: config.channels.mms })) {
    if (!carrier.webhookSecret) secrets[`HERMOD_${channel}_WEBHOOK_SECRET`] = randomBytes(24).toString('base64url');
  }
  // The RBM simulator issues OAuth tokens to a service account: hermod and it share a key made for this start.
  if (!config.channels.rcs.serviceAccount)
    secrets.HERMOD_RCS_SERVICE_ACCOUNT = writeServiceAccountKey(config.dataDir, `http://127.0.0.1:${config.channelSimulators.rcsPort}/token`).file;
  return secrets;
}

/** A process's `process` label in the metrics: its role, and which one of them (`gateway-1`, `worker-email,wab`). */
function processName(info: { role: Role; index: number; channel?: string }): string {
  if (info.role === 'gateway') return `gateway-${info.index}`;
  if (info.role === 'worker' && info.channel) return `worker-${info.channel}`;
  return info.role;
}
