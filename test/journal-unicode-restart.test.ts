import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSmscSimulator, type SmscSimulator } from '../workers/simulators/smsc-simulator';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';

/**
 * The history journal checkpoints by byte offset while people write in every
 * script. These kill -9 hermod while clients are still sending such messages
 * (so some rows sit in the journal past the last checkpoint, after rows full
 * of multi-byte characters) and check that every message answered 202 is
 * still there, whole, after the restart, and then that each reaches a final
 * status. One crash per scenario serves both checks.
 */

const TEXTS = ['Kia ora, e hoa mā — tēnā koe', 'Привет, как дела? Увидимся завтра', '你好世界，明天见', '👋🏽🎉 see you soon 👨‍👩‍👧'];
const FINAL = new Set(['received', 'blocked', 'deficient', 'frozen', 'rejected', 'failed', 'dead', 'expired', 'read']);
const AT_LEAST_SUBMITTED = new Set(['submitted', ...FINAL]);

interface Sent {
  id: string;
  content: string;
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

/** What the carrier saw: for telling apart, when a message stays `submitted`, whether its receipt was ever sent. */
interface CarrierLog {
  carrierIdsByText: Map<string, string[]>;
  receiptWrites: Map<string, number>;
}

async function startSimulator(): Promise<{ simulator: SmscSimulator; carrier: CarrierLog }> {
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20 });
  const carrier: CarrierLog = { carrierIdsByText: new Map(), receiptWrites: new Map() };
  simulator.on('submit', (s) => {
    if (s.carrierMessageId) carrier.carrierIdsByText.set(s.text, [...(carrier.carrierIdsByText.get(s.text) ?? []), s.carrierMessageId]);
  });
  simulator.on('receipt', (r) => carrier.receiptWrites.set(r.carrierMessageId, (carrier.receiptWrites.get(r.carrierMessageId) ?? 0) + 1));
  await simulator.start();
  cleanup.push(() => simulator.stop());
  return { simulator, carrier };
}

/**
 * For messages that did not get there: how often the carrier wrote each one's
 * receipt to hermod, and how many receipts hermod itself says it dropped.
 */
function receiptHistory(carrier: CarrierLog, hermod: HermodProcess, sent: readonly Sent[], stuck: ReadonlySet<string>): string {
  const counts = sent
    .filter((s) => stuck.has(s.id))
    .map((s) => (carrier.carrierIdsByText.get(s.content) ?? []).map((id) => carrier.receiptWrites.get(id) ?? 0).join('+') || 'never submitted');
  const dropped = hermod
    .output()
    .split('\n')
    .filter((l) => l.includes('dropping delivery report')).length;
  return `receipt deliver_sm written per such message: ${JSON.stringify(counts)}; hermod logged ${dropped} dropped delivery reports after the restart`;
}

/**
 * Clients keep sending until hermod is killed under them; resolves with every
 * message that was answered 202 before the kill. Requests in flight at the
 * kill get no answer, and the client does not count them.
 */
async function sendThenKill(hermod: HermodProcess, accepted: number): Promise<Sent[]> {
  const client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  const sent: Sent[] = [];
  let killed = false;
  let n = 0;
  const sender = async (): Promise<void> => {
    while (!killed) {
      const i = n++;
      // Two handsets per script, so history holds several conversations with each.
      const content = `${TEXTS[i % TEXTS.length]} (${i})`;
      const destination = `+6421${String(i % 8).padStart(6, '0')}`;
      try {
        const r = await client.post('/rest/sms/v2/messages', { destination, content });
        if (r.status === 202) sent.push({ id: r.json.id, content });
        else if (!killed) throw new Error(`unexpected ${r.status}: ${r.text}`);
      } catch (err) {
        if (!killed) throw err;
      }
    }
  };
  const senders = Array.from({ length: 16 }, () => sender());
  await eventually(async () => (sent.length >= accepted && longTail(hermod.dataDir) ? true : undefined), 60_000, 5);
  // Not waiting for the senders: the kill lands while requests are in flight.
  killed = true;
  await hermod.kill9();
  await Promise.allSettled(senders);
  client.close();
  return [...sent];
}

/**
 * True while the journal's last checkpoint sits part-way into a segment (rows
 * before it) and is most of a flush interval old (rows after it): where a
 * replay that mistook bytes for characters would lose the most.
 */
function longTail(dataDir: string): boolean {
  try {
    const file = path.join(dataDir, 'journal', 'checkpoint.json');
    const age = Date.now() - fs.statSync(file).mtimeMs;
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { offset: number }).offset > 0 && age > 600 && age < 900;
  } catch {
    return false;
  }
}

/** Polls every message until `done` says each status is enough; returns the last status of each. */
async function statusesAfterRestart(
  client: Client,
  sent: readonly Sent[],
  done: (status: string) => boolean,
  timeoutMs: number,
  explain: (stuck: ReadonlySet<string>) => string = () => '',
): Promise<Map<string, string>> {
  const last = new Map<string, string>();
  const finished = new Set<string>();
  await eventually(
    async () => {
      // 32 at a time, as a client with a connection pool asks.
      const open = sent.filter((s) => !finished.has(s.id));
      for (let i = 0; i < open.length; i += 32) {
        await Promise.all(
          open.slice(i, i + 32).map(async (s) => {
            const r = await client.get(`/rest/sms/v2/messages?id=${s.id}`);
            last.set(s.id, r.status === 200 ? r.json.status : `HTTP ${r.status}`);
            if (r.status === 200) expect(r.json.content).toBe(s.content);
            if (r.status === 200 && done(r.json.status)) finished.add(s.id);
          }),
        );
      }
      return finished.size === sent.length ? true : undefined;
    },
    timeoutMs,
    250,
  ).catch((err: Error) => {
    const stuck = [...last].filter(([id]) => !finished.has(id));
    throw new Error(
      `${stuck.length} of ${sent.length} messages never got there, e.g. ${JSON.stringify(stuck.slice(0, 5))}: ${err.message}; ${explain(new Set(stuck.map(([id]) => id)))}`,
    );
  });
  return last;
}

async function restart(dataDir: string, env: Record<string, string>): Promise<{ hermod: HermodProcess; client: Client }> {
  const hermod = await startHermod({ dataDir, env });
  cleanup.push(() => hermod.stop());
  const client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
  cleanup.push(async () => client.close());
  return { hermod, client };
}

async function start(name: string): Promise<{
  dataDir: string;
  env: Record<string, string>;
  simulator: SmscSimulator;
  carrier: CarrierLog;
  hermod: HermodProcess;
}> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `hermod-${name}-`));
  cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const { simulator, carrier } = await startSimulator();
  // Flushing once a second leaves up to a second of rows after the checkpoint.
  const env = { HERMOD_SMSC_SIMULATOR: 'false', HERMOD_SMPP_PORT: String(simulator.port), HERMOD_SMPP_RECONNECT_MAX: '500ms', HERMOD_HISTORY_FLUSH: '1s' };
  const hermod = await startHermod({ dataDir, env });
  cleanup.push(() => hermod.kill9());
  return { dataDir, env, simulator, carrier, hermod };
}

/** The carrier's state at the crash: refusing binds (every message waits in hermod) or taking messages (some are between submit and receipt). */
const SCENARIOS = [
  { carrier: 'unreachable', refuse: true },
  { carrier: 'taking messages', refuse: false },
] as const;

async function crashAndRestart(name: string, refuse: boolean) {
  const { dataDir, env, simulator, carrier, hermod } = await start(name);
  simulator.refuse(refuse);
  const sent = await sendThenKill(hermod, 600);
  simulator.refuse(false);
  const { hermod: restarted, client } = await restart(dataDir, env);
  return { sent, client, explain: (stuck: ReadonlySet<string>) => receiptHistory(carrier, restarted, sent, stuck) };
}

describe('kill -9 while people write in te reo Māori, Cyrillic, CJK and emoji', () => {
  for (const scenario of SCENARIOS) {
    it(`still knows every message answered 202, whole, after a restart, and brings each to a final status, when the carrier was ${scenario.carrier} at the crash`, async () => {
      const { sent, client, explain } = await crashAndRestart('journal-unicode', scenario.refuse);
      // First what the journal kept: each message known, whole, and submitted to the carrier or further
      // (a failure here is the journal's; one in the next step is the delivery pipeline's).
      const seen = await statusesAfterRestart(client, sent, (s) => AT_LEAST_SUBMITTED.has(s), 90_000, explain);
      // Then that each reaches a final status: one already seen at one has (a pass over 700 messages takes 8 s).
      const open = sent.filter((s) => !FINAL.has(seen.get(s.id) ?? ''));
      await statusesAfterRestart(client, open, (s) => FINAL.has(s), 90_000, explain);
    }, 300_000);
  }
});
