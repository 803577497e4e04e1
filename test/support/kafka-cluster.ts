import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { eventually } from './eventually';
import { freePort } from './free-port';

/**
 * Real Kafka brokers for tests: KRaft nodes (broker and controller in one JVM)
 * started from jars that test/kafka/fetch-kafka.sh takes from Maven Central.
 * No Docker, no tarball: only `java` and `mvn` on the PATH.
 */

/** The newest releases of the two lines hermod supports, as found on Maven Central. */
export const KAFKA_VERSIONS = ['3.9.2', '4.4.0'] as const;

const repoRoot = path.resolve(import.meta.dirname, '../..');
const fetchScript = path.join(repoRoot, 'test/kafka/fetch-kafka.sh');

/** Why real brokers cannot run here (a missing tool), or undefined when they can. */
export function kafkaUnavailableReason(): string | undefined {
  for (const [tool, args] of [
    ['java', ['-version']],
    ['mvn', ['-v']],
  ] as const) {
    const r = spawnSync(tool, args, { stdio: 'ignore' });
    if (r.error || r.status !== 0) return `${tool} is not on the PATH (needed to fetch and run a Kafka broker)`;
  }
  return undefined;
}

/** The jar directory of a Kafka release, fetched from Maven Central the first time. */
export async function kafkaJars(version: string): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [fetchScript, version], { maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 });
  return stdout.trim().split('\n').pop()!;
}

export interface KafkaNode {
  readonly id: number;
  readonly address: string;
  readonly dir: string;
  /** The broker's own log (stdout and stderr of the JVM). */
  log(): string;
  running(): boolean;
  /** kill -9: no controlled shutdown, no flush. */
  kill(): void;
  /** SIGSTOP: a hung broker, its connections open and unanswered, until `thaw`. */
  freeze(): void;
  /** SIGCONT after `freeze`. */
  thaw(): void;
}

export interface KafkaCluster {
  readonly version: string;
  readonly brokers: string[];
  readonly nodes: readonly KafkaNode[];
  /** Stops every node and removes their data. Safe to call twice. */
  stop(): Promise<void>;
}

export interface KafkaClusterOptions {
  version: string;
  /** 1 or 3 nodes (default 1). */
  nodes?: number;
  /** Extra server.properties, e.g. `{ 'min.insync.replicas': '2' }`. */
  properties?: Record<string, string>;
  /** Longest wait for the cluster to answer (default 120 s; a cold JVM on a busy machine is slow). */
  readyTimeoutMs?: number;
}

/** Every JVM this module started and has not stopped, so a crash of the test process still kills them. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Starts the cluster on free ports. A port is free when it is picked and taken
 * only when the JVM binds it, so another test can take it in between ("Address
 * already in use"): the start is then made again on new ports.
 */
export async function startKafkaCluster(options: KafkaClusterOptions): Promise<KafkaCluster> {
  const jars = await kafkaJars(options.version);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, jars);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt >= 3) throw err;
    }
  }
}

class PortTaken extends Error {}

async function startOnce(options: KafkaClusterOptions, jars: string): Promise<KafkaCluster> {
  const count = options.nodes ?? 1;
  const major = Number(options.version.split('.')[0]);
  const root = mkdtempSync(path.join(os.tmpdir(), `hermod-kafka-${options.version}-`));
  // Kafka's own generator never starts an id with '-', which its argument parser would take for an option.
  const clusterId = `K${randomBytes(15).toString('base64url')}`;
  const ports = await Promise.all(Array.from({ length: count }, async () => ({ broker: await freePort(), controller: await freePort() })));
  const voters = ports.map((p, i) => `${i + 1}@127.0.0.1:${p.controller}`).join(',');

  const nodes: (KafkaNode & { child: ChildProcess; command: string })[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => stopChild(n.child)));
    rmSync(root, { recursive: true, force: true });
  };

  try {
    for (let i = 0; i < count; i++) {
      const id = i + 1;
      const dir = path.join(root, `node-${id}`);
      const props = serverProperties({ id, dir, count, voters, port: ports[i]!.broker, controllerPort: ports[i]!.controller, extra: options.properties });
      const { configFile, javaArgs } = writeNodeFiles(dir, props, major);
      const classpath = `${jars}/*`;
      const format = spawnSync('java', ['-Xmx256m', ...javaArgs, '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', configFile], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      if (format.status !== 0) {
        throw new Error(
          `formatting Kafka ${options.version} storage failed (java -cp '${classpath}' kafka.tools.StorageTool format -t ${clusterId} -c ${configFile}):\n${format.stdout}${format.stderr}${format.error ?? ''}`,
        );
      }
      const logFile = path.join(dir, 'server.out');
      const out = openSync(logFile, 'a');
      const args = [
        '-Xms128m',
        // Kafka's own scripts give a broker 1 GB. 256 MB ran out once (OutOfMemoryError) in a three-node
        // failover test on a loaded CI machine; the heap is only taken as it is used.
        '-Xmx512m',
        '-XX:+UseSerialGC',
        '-XX:TieredStopAtLevel=1',
        '-Djava.awt.headless=true',
        ...javaArgs,
        '-cp',
        classpath,
        'kafka.Kafka',
        configFile,
      ];
      const child = spawn('java', args, { stdio: ['ignore', out, out] });
      closeSync(out);
      live.add(child);
      child.once('exit', () => live.delete(child));
      const command = `java ${args.map((a) => (a.includes('*') ? `'${a}'` : a)).join(' ')}`;
      nodes.push({
        id,
        dir,
        child,
        command,
        address: `127.0.0.1:${ports[i]!.broker}`,
        log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
        running: () => child.exitCode === null && child.signalCode === null,
        kill: () => {
          child.kill('SIGKILL');
        },
        freeze: () => {
          child.kill('SIGSTOP');
        },
        thaw: () => {
          child.kill('SIGCONT');
        },
      });
    }
    await waitUntilReady(nodes, count, options.readyTimeoutMs ?? 120_000);
  } catch (err) {
    const detail = nodes.map((n) => `--- node ${n.id}: ${n.command}\n${tail(n.log(), 60)}`).join('\n');
    const portTaken = nodes.some((n) => n.log().includes('Address already in use'));
    await stop();
    if (portTaken) throw new PortTaken(`a port was taken before Kafka bound it:\n${detail}`);
    throw new Error(`Kafka ${options.version} did not start: ${err instanceof Error ? err.message : String(err)}\n${detail}`, { cause: err });
  }

  return { version: options.version, brokers: nodes.map((n) => n.address), nodes, stop };
}

function serverProperties(p: {
  id: number;
  dir: string;
  count: number;
  voters: string;
  port: number;
  controllerPort: number;
  extra?: Record<string, string>;
}): Record<string, string> {
  const replicas = String(p.count);
  return {
    'process.roles': 'broker,controller',
    'node.id': String(p.id),
    'controller.quorum.voters': p.voters,
    listeners: `PLAINTEXT://127.0.0.1:${p.port},CONTROLLER://127.0.0.1:${p.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${p.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'log.dirs': path.join(p.dir, 'data'),
    'auto.create.topics.enable': 'false',
    'num.partitions': '1',
    'default.replication.factor': replicas,
    'offsets.topic.replication.factor': replicas,
    // Fewer offset partitions than the default 50: far less start-up work for a test broker.
    'offsets.topic.num.partitions': '4',
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': String(Math.min(2, p.count)),
    'share.coordinator.state.topic.replication.factor': replicas,
    'share.coordinator.state.topic.min.isr': String(Math.min(2, p.count)),
    // Tests join groups one member at a time; waiting for more would only slow them down.
    'group.initial.rebalance.delay.ms': '0',
    'num.network.threads': '2',
    'num.io.threads': '2',
    'num.recovery.threads.per.data.dir': '1',
    'log.flush.interval.messages': String(Number.MAX_SAFE_INTEGER),
    ...p.extra,
  };
}

/** Writes server.properties and the logging configuration; returns the JVM flags that point at them. */
function writeNodeFiles(dir: string, props: Record<string, string>, major: number): { configFile: string; javaArgs: string[] } {
  spawnSync('mkdir', ['-p', dir]);
  const configFile = path.join(dir, 'server.properties');
  writeFileSync(
    configFile,
    Object.entries(props)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
  );
  // Kafka 3.x logs through log4j 1 (reload4j); 4.x through log4j2. Both to stdout, which goes to server.out.
  if (major >= 4) {
    const file = path.join(dir, 'log4j2.properties');
    writeFileSync(
      file,
      [
        'appender.out.type=Console',
        'appender.out.name=out',
        'appender.out.layout.type=PatternLayout',
        'appender.out.layout.pattern=[%d] %p %m (%c)%n',
        'rootLogger.level=INFO',
        'rootLogger.appenderRef.out.ref=out',
        'logger.kafka.name=kafka',
        'logger.kafka.level=INFO',
        'logger.state.name=state.change.logger',
        'logger.state.level=WARN',
        'logger.request.name=kafka.request.logger',
        'logger.request.level=WARN',
      ].join('\n') + '\n',
    );
    return { configFile, javaArgs: [`-Dlog4j2.configurationFile=${file}`] };
  }
  const file = path.join(dir, 'log4j.properties');
  writeFileSync(
    file,
    [
      'log4j.rootLogger=INFO, out',
      'log4j.appender.out=org.apache.log4j.ConsoleAppender',
      'log4j.appender.out.layout=org.apache.log4j.PatternLayout',
      'log4j.appender.out.layout.ConversionPattern=[%d] %p %m (%c)%n',
      'log4j.logger.state.change.logger=WARN',
      'log4j.logger.kafka.request.logger=WARN',
    ].join('\n') + '\n',
  );
  return { configFile, javaArgs: [`-Dlog4j.configuration=file:${file}`] };
}

/** Ready when every node is registered with the cluster and answers metadata; fails at once if a node exits. */
async function waitUntilReady(nodes: readonly (KafkaNode & { child: ChildProcess })[], count: number, timeoutMs: number): Promise<void> {
  const kafka = new Kafka({ clientId: 'hermod-test-ready', brokers: nodes.map((n) => n.address), logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const ready = eventually(
    async () => {
      const admin = kafka.admin();
      try {
        await admin.connect();
        const cluster = await admin.describeCluster();
        if (cluster.brokers.length === count && cluster.controller !== null) return true;
        throw new Error(`${cluster.brokers.length} of ${count} brokers registered`);
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    },
    timeoutMs,
    500,
  );
  const died = nodes.map((n) =>
    n.running()
      ? new Promise<never>((_, reject) => n.child.once('exit', () => reject(new Error(`node ${n.id} exited`))))
      : Promise.reject(new Error(`node ${n.id} exited`)),
  );
  await Promise.race([ready, ...died]);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Tests do not need a controlled shutdown, and it can hang while the other nodes are gone.
  child.kill('SIGKILL');
  await exited;
}

const tail = (text: string, lines: number): string => text.split('\n').slice(-lines).join('\n');
