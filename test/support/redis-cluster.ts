import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { eventually } from './eventually';
import { freePort } from './free-port';

/**
 * A throw-away Redis Cluster for tests: three masters with one replica each,
 * real `redis-server` processes on free ports with their own temporary
 * directories, nothing persisted. A short node timeout makes a replica take
 * over within a few seconds of its master's death.
 */
export interface LocalRedisCluster {
  /** Every node's port, masters and replicas as `redis-cli --cluster create` arranged them. */
  readonly ports: readonly number[];
  /** Seed nodes in hermod's form: `redis://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`. */
  readonly url: string;
  /** Port of the master that serves `key`'s hash slot now. */
  masterOf(key: string): Promise<number>;
  /** The masters now, each with the slot ranges it serves (one CLUSTER SLOTS), to place many keys at once. */
  masters(): Promise<{ port: number; serves(slot: number): boolean }[]>;
  /** Port of the replica of the master at `port`. */
  replicaOf(port: number): Promise<number>;
  /** kill -9 of one node. */
  kill9(port: number): void;
  /** SIGSTOP / SIGCONT of one node: it keeps its sockets but answers nothing (a lagging replica). */
  pause(port: number): void;
  resume(port: number): void;
  /** Resolves once the dead master's replica owns its slots and every live node says cluster_state:ok. */
  waitForFailover(deadPort: number, timeoutMs?: number): Promise<void>;
  /** The last lines of every node's log, to explain a failure. */
  logs(): Promise<string>;
  /** Stops every process (kill -9: nothing is kept anyway) and removes the directories. */
  stop(): Promise<void>;
}

export interface RedisClusterOptions {
  /** cluster-node-timeout in ms (default 1000): how soon a silent master is failed over. */
  nodeTimeoutMs?: number;
}

/** Why a cluster cannot be started here (no redis-server or redis-cli on PATH), or undefined when it can. */
export function redisClusterUnavailable(): string | undefined {
  for (const binary of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) return `${binary} is not installed or does not run (${probe.error?.message ?? probe.stderr.trim()})`;
  }
  return undefined;
}

interface Node {
  port: number;
  dir: string;
  child: ChildProcess;
  exited: Promise<void>;
}

const HOST = '127.0.0.1';
const MASTERS = 3;

export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<LocalRedisCluster> {
  // A port taken between freePort() and redis-server's bind fails the start; try again on fresh ports.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await tryStart(options);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

async function tryStart(options: RedisClusterOptions): Promise<LocalRedisCluster> {
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1000;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-redis-cluster-'));
  const nodes: Node[] = [];
  const stop = async (): Promise<void> => {
    for (const n of nodes) if (n.child.exitCode === null && n.child.signalCode === null) n.child.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < MASTERS * 2; i++) nodes.push(await startNode(root, i, nodeTimeoutMs));
    await Promise.all(nodes.map((n) => waitForPing(n)));
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `${HOST}:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${create.stdout}\n${create.stderr}`);
    await eventually(
      () =>
        clusterHealthy(
          nodes.map((n) => n.port),
          MASTERS,
        ),
      60_000,
      100,
    );
  } catch (err) {
    await stop();
    throw err;
  }

  const ports = nodes.map((n) => n.port);
  const nodeAt = (port: number): Node => {
    const node = nodes.find((n) => n.port === port);
    if (!node) throw new Error(`no node on port ${port}`);
    return node;
  };
  const live = (): number[] => nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null).map((n) => n.port);

  return {
    ports,
    url: `redis://${ports
      .slice(0, MASTERS)
      .map((p) => `${HOST}:${p}`)
      .join(',')}`,
    async masterOf(key) {
      return withNode(live()[0]!, async (r) => {
        const slot = Number(await r.call('CLUSTER', 'KEYSLOT', key));
        const slots = (await r.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, string]][];
        const range = slots.find(([from, to]) => slot >= from && slot <= to);
        if (!range) throw new Error(`no node serves slot ${slot}`);
        return Number(range[2][1]);
      });
    },
    async masters() {
      const slots = await withNode(live()[0]!, (r) => r.call('CLUSTER', 'SLOTS') as Promise<[number, number, [string, number]][]>);
      const byPort = new Map<number, [number, number][]>();
      for (const [from, to, [, port]] of slots) byPort.set(Number(port), [...(byPort.get(Number(port)) ?? []), [from, to]]);
      return [...byPort].map(([port, ranges]) => ({ port, serves: (slot: number) => ranges.some(([from, to]) => slot >= from && slot <= to) }));
    },
    async replicaOf(port) {
      const id = await withNode(port, async (r) => String(await r.call('CLUSTER', 'MYID')));
      for (const p of live()) {
        if (p === port) continue;
        const role = await withNode(p, async (r) => String(await r.call('CLUSTER', 'NODES')));
        const me = role.split('\n').find((line) => line.includes('myself'));
        if (me?.split(' ')[3] === id) return p;
      }
      throw new Error(`the master on port ${port} has no replica`);
    },
    kill9(port) {
      nodeAt(port).child.kill('SIGKILL');
    },
    pause(port) {
      nodeAt(port).child.kill('SIGSTOP');
    },
    resume(port) {
      nodeAt(port).child.kill('SIGCONT');
    },
    async waitForFailover(deadPort, timeoutMs = 60_000) {
      await nodeAt(deadPort).exited;
      await eventually(
        async () => {
          const ports = live();
          if (!(await clusterHealthy(ports, MASTERS, { requireReplicas: false }))) return false;
          // Every live node must agree that no slot is served by the dead node any more.
          for (const p of ports) {
            const slots = await withNode(p, (r) => r.call('CLUSTER', 'SLOTS') as Promise<[number, number, [string, number]][]>);
            if (slots.some((s) => Number(s[2][1]) === deadPort)) return false;
          }
          return true;
        },
        timeoutMs,
        100,
      );
    },
    async logs() {
      return nodes
        .map((n) => {
          const file = path.join(n.dir, 'redis.log');
          const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
          return `--- node ${n.port}\n${text.split('\n').slice(-40).join('\n')}`;
        })
        .join('\n');
    },
    stop,
  };
}

async function startNode(root: string, index: number, nodeTimeoutMs: number): Promise<Node> {
  const dir = path.join(root, `node-${index}`);
  fs.mkdirSync(dir);
  const port = await freePort();
  // Redis 7 lets the cluster bus have its own port, so it need not be port + 10000 (which may be taken).
  const busPort = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--cluster-enabled',
    'yes',
    '--cluster-port',
    String(busPort),
    '--cluster-config-file',
    path.join(dir, 'nodes.conf'),
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    // A replica's first sync starts at once instead of after the default 5 s.
    '--repl-diskless-sync-delay',
    '0',
    '--protected-mode',
    'no',
    '--logfile',
    path.join(dir, 'redis.log'),
  ];
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  return { port, dir, child, exited };
}

async function waitForPing(node: Node): Promise<void> {
  const log = (): string => (fs.existsSync(path.join(node.dir, 'redis.log')) ? fs.readFileSync(path.join(node.dir, 'redis.log'), 'utf8') : '');
  await Promise.race([
    eventually(() => withNode(node.port, async (r) => (await r.ping()) === 'PONG'), 20_000, 100),
    node.exited.then(() => Promise.reject(new Error(`redis-server on port ${node.port} exited:\n${log().slice(-2000)}`))),
  ]);
}

/**
 * cluster_state:ok and `masters` masters on every node, and (unless told otherwise) every replica in sync and
 * listed by CLUSTER SLOTS: Redis lists a replica there only once it has taken data from its master, and
 * clients (hermod's replica wait among them) go by that list.
 */
async function clusterHealthy(ports: readonly number[], masters: number, opts: { requireReplicas?: boolean } = {}): Promise<boolean> {
  try {
    for (const port of ports) {
      const info = await withNode(port, (r) => r.call('CLUSTER', 'INFO') as Promise<string>);
      if (!/cluster_state:ok/.test(info) || !new RegExp(`cluster_size:${masters}\\b`).test(info)) return false;
      const replication = await withNode(port, (r) => r.info('replication'));
      if (/role:slave/.test(replication) && !(/master_link_status:up/.test(replication) && /master_sync_in_progress:0/.test(replication))) return false;
      if (opts.requireReplicas === false) continue;
      if (/role:master/.test(replication) && !/slave0:.*state=online/.test(replication)) return false;
      const slots = await withNode(port, (r) => r.call('CLUSTER', 'SLOTS') as Promise<unknown[][]>);
      if (slots.some((range) => range.length < 4)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

async function withNode<T>(port: number, use: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({ host: HOST, port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000, commandTimeout: 2000 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await use(r);
  } finally {
    r.disconnect();
  }
}
