import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

/**
 * A Kafka bus group member in its own process, for tests that kill one with
 * SIGKILL: no close, no LeaveGroup, no last commit. It subscribes, prints
 * `held <offsets>` for each batch and never acknowledges one (but those
 * `ending` names).
 */
export interface KafkaMemberProcess {
  /** Offsets of every record the member has been handed, as it reported them. */
  readonly held: string[];
  kill(): Promise<void>;
}

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface KafkaMemberOptions {
  brokers: string[];
  topic: string;
  group: string;
  sessionTimeoutMs: number;
  /** Batches side by side (SubscribeOptions.inFlight). */
  inFlight?: number;
  maxBatch?: number;
  /** Batches whose every record's text starts with this end at once; the others are held forever. */
  ending?: string;
}

export async function startKafkaMemberProcess(o: KafkaMemberOptions): Promise<KafkaMemberProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/support/kafka-member-main.ts')], {
    cwd: ROOT,
    env: { ...process.env, MEMBER_ARGS: JSON.stringify(o) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const held: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const subscribed = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`member process exited (${code}): ${stderr}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'subscribed') resolve();
      if (line.startsWith('held ')) held.push(...line.slice(5).split(','));
    });
  });
  await subscribed;
  return {
    held,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
