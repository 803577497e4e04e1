import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { createSmscSimulator } from '../../workers/simulators/smsc-simulator';
import { createClient } from './https-client';
import { eventually } from './eventually';
import { startRole, type RoleProcess } from './role-process';
import { diagnoseRedisBus } from './redis-bus-diagnosis';
import { REDIS_URL } from './redis-keys';

const MESSAGES = 5_000;
const WINDOW = 64;

export interface MultiProcessOptions {
  /** What the printed line starts with (default `multi-process`). */
  title?: string;
  /**
   * Started once the first half of the messages has been accepted and run
   * while the second half is being sent, instead of killing one SMS worker
   * with -9 (the default).
   */
  disrupt?: (roles: { workers: readonly RoleProcess[] }) => Promise<void>;
  /**
   * Most duplicate submits allowed (default: what the killed worker could have
   * had in flight). A disruption elsewhere may redeliver more; lost stays 0.
   */
  maxDuplicates?: number;
}

/**
 * Two gateways, one core and three SMS workers as processes of their own on
 * the given bus, with Redis hot state under `prefix`: 5,000 messages sent
 * through both gateways while one worker is killed with -9 (or while
 * `options.disrupt` does its own damage). Prints sent, reached, lost and
 * duplicates, and asserts none lost.
 */
export async function runMultiProcess(
  label: string,
  busEnv: Record<string, string>,
  prefix: string,
  processes: RoleProcess[],
  options: MultiProcessOptions = {},
): Promise<void> {
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20 });
  const { port: smscPort } = await simulator.start();
  const received = new Map<string, number>();
  simulator.on('message', (m: { text: string }) => received.set(m.text, (received.get(m.text) ?? 0) + 1));

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-mp-'));
  const env = {
    HERMOD_STATE: 'redis',
    HERMOD_REDIS_URL: REDIS_URL,
    HERMOD_REDIS_PREFIX: prefix,
    ...busEnv,
    HERMOD_BUS_PARTITIONS: '12',
    HERMOD_DATA_DIR: dataDir,
    HERMOD_CORE_ADDRESS: '127.0.0.1:0',
    HERMOD_METRICS_PORT: '0',
    HERMOD_HOST: '127.0.0.1',
    HERMOD_SMPP_PORT: String(smscPort),
    HERMOD_SMPP_WINDOW: String(WINDOW),
    HERMOD_BOOTSTRAP_APP: 'acme',
    HERMOD_BOOTSTRAP_PASSWORD: 'secret',
  };
  // Every process binds port 0 and says in its ready line which port it got; the gateways are given core's.
  const core = await startRole(['core'], env, '"msg":"core listening"');
  processes.push(core);
  const workers: RoleProcess[] = [];
  for (let i = 0; i < 3; i++) workers.push(await startRole(['worker', '--channel', 'sms'], env, '"msg":"channel worker started"'));
  processes.push(...workers);
  const gatewayUrls: string[] = [];
  const gateways: RoleProcess[] = [];
  for (let i = 0; i < 2; i++) {
    const gateway = await startRole(
      ['gateway'],
      { ...env, HERMOD_CORE_ADDRESS: core.ready.grpc, HERMOD_HTTPS_PORT: '0', HERMOD_HTTP_PORT: '0' },
      '"msg":"gateway listening"',
    );
    processes.push(gateway);
    gateways.push(gateway);
    gatewayUrls.push(gateway.ready.https);
  }
  const started = Date.now();
  const ca = fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8');
  const clients = gatewayUrls.map((url) => createClient(url, ca, { user: 'acme', pass: 'secret' }));

  const ids: string[] = [];
  let killed = false;
  let disruption: Promise<void> | undefined;
  const concurrency = 100;
  for (let i = 0; i < MESSAGES; i += concurrency) {
    const replies = await Promise.all(
      Array.from({ length: concurrency }, (_, j) => {
        const n = i + j;
        return clients[n % 2]!.post('/rest/sms/v2/messages', { destination: `+6422${String(n % 5000).padStart(6, '0')}`, content: `m${n}` });
      }),
    );
    const refused = replies.find((r) => r.status !== 202);
    if (refused) {
      // What the processes said before a refusal tells a stalled core from a broken stream (a CI run once met a 504 here).
      console.log(`message ${i}… answered ${refused.status} ${JSON.stringify(refused.json)} ${Date.now() - started} ms after the roles started`);
      for (const [name, p] of [['core', core], ...gateways.map((g, k) => [`gateway ${k + 1}`, g] as const)] as const)
        console.log(`${name}, last lines:\n${p.output().split('\n').slice(-15).join('\n')}`);
    }
    for (const r of replies) {
      expect(r.status).toBe(202);
      ids.push(r.json.id);
    }
    if (!killed && i >= MESSAGES / 2) {
      killed = true;
      // A disruption of the test's own runs alongside the traffic, so it lands while requests are in flight.
      if (options.disrupt) disruption = options.disrupt({ workers });
      else await workers[0]!.kill9();
    }
  }

  await disruption;
  // A timeout here still prints the counts below, so a loss reads as a number, not a bare timeout.
  await eventually(async () => (received.size === MESSAGES ? true : undefined), 120_000, 250).catch(() => undefined);
  const submits = [...received.values()].reduce((a, n) => a + n, 0);
  const duplicates = submits - received.size;
  const lost = MESSAGES - received.size;
  console.log(
    `${options.title ?? 'multi-process'} (${label}): ${MESSAGES} messages, ${received.size} reached the simulator, ${lost} lost, ${duplicates} duplicate submits`,
  );
  if (lost > 0) {
    const missing = Array.from({ length: MESSAGES }, (_, n) => n).filter((n) => !received.has(`m${n}`));
    console.log(
      `never reached the simulator (first 20 of ${lost}): ${missing
        .slice(0, 20)
        .map((n) => `m${n} ${ids[n]}`)
        .join(', ')}`,
    );
    if (busEnv.HERMOD_BUS === 'redis')
      console.log(
        `where they are held:\n${await diagnoseRedisBus(
          prefix,
          12,
          missing.slice(0, 8).map((n) => ids[n]!),
        )}`,
      );
    // What the processes complained of says where they stopped (a hand-off core gave up on, a worker's failed submit).
    for (const [name, p] of [['core', core], ...workers.map((w, i) => [`sms worker ${i + 1}`, w] as const)] as const) {
      const complaints = p
        .output()
        .split('\n')
        .filter((l) => /"level":"(warn|error)"/.test(l));
      console.log(`${name}: ${complaints.length} warn/error lines${complaints.length ? `, the last 10:\n${complaints.slice(-10).join('\n')}` : ''}`);
    }
  }
  if (process.env.HERMOD_TEST_LOG_DIR) {
    for (const [name, p] of [['core', core], ...workers.map((w, i) => [`worker-${i + 1}`, w] as const)] as const) {
      fs.writeFileSync(path.join(process.env.HERMOD_TEST_LOG_DIR, `${name}.log`), p.output());
    }
  }
  expect(lost).toBe(0);
  // Only what the killed worker had in flight may go out twice.
  expect(duplicates).toBeLessThanOrEqual(options.maxDuplicates ?? WINDOW * 2);
  // Statuses came back through the bus to core: a sample reads `received` through either gateway.
  // A disruption can move the status topic's group coordinator: the group's rebalance may take a
  // session timeout (30 s) and more before core reads the receipts again, so the wait is longer.
  for (const [i, id] of ids.filter((_, i) => i % 500 === 0).entries()) {
    const details = await eventually(async () => {
      const r = await clients[i % 2]!.get(`/rest/sms/v2/messages?id=${id}`);
      // A status short of `received` fails the try with what it is, so a timeout says where the message stopped.
      if (r.json?.status !== 'received') throw new Error(`message ${id} is ${r.status} ${JSON.stringify(r.json)}`);
      return r.json;
    }, 90_000);
    expect(details).toMatchObject({ id, direction: 'MT', status: 'received' });
  }
  for (const c of clients) c.close();
  await simulator.stop();
}
