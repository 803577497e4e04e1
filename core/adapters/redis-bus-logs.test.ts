import { spawn } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Logger } from '../../lib/log';
import { eventually } from '../../test/support/eventually';
import { freePort } from '../../test/support/free-port';
import { openBus } from './open-adapters';
import type { AdaptersConfig } from '../../lib/config';

/** A logger that keeps every line with the fields its children add, as a role's does. */
function keptLines(base: Record<string, unknown>): { log: Logger; lines: { msg: string; fields: Record<string, unknown> }[] } {
  const lines: { msg: string; fields: Record<string, unknown> }[] = [];
  const make = (fields: Record<string, unknown>): Logger => {
    const write = (msg: string, extra: Record<string, unknown> = {}) => void lines.push({ msg, fields: { ...fields, ...extra } });
    return { debug: write, info: write, warn: write, error: write, child: (more) => make({ ...fields, ...more }) };
  };
  return { log: make(base), lines };
}

describe('the Redis bus of a role, through a Redis stall', () => {
  let port: number;
  let redis: ReturnType<typeof spawn>;
  beforeAll(async () => {
    port = await freePort();
    // A Redis of its own: stopping it must not stall other tests' Redis.
    redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await eventually(
      () =>
        new Promise<boolean | undefined>((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => {
            s.end();
            resolve(true);
          });
          s.on('error', () => resolve(undefined));
        }),
      10_000,
    );
  });
  afterAll(() => {
    redis.kill('SIGCONT');
    redis.kill('SIGKILL');
  });

  it('writes its lines with the role’s fields, and says the leases a stall ended in one line', async () => {
    const { log, lines } = keptLines({ role: 'worker', pid: 4242 });
    const adapters = { bus: 'redis', redisUrl: `redis://127.0.0.1:${port}`, redisPrefix: `logs-${process.pid}`, busPartitions: 8 } as AdaptersConfig;
    const bus = await openBus(adapters, log);
    try {
      await bus.subscribe('hermod.kupu.v1', async () => undefined, { group: 'kupu-workers' });
      await new Promise((r) => setTimeout(r, 500));
      redis.kill('SIGSTOP');
      // Past the leases' 5 s.
      await new Promise((r) => setTimeout(r, 7000));
      redis.kill('SIGCONT');
      await eventually(() => lines.some((l) => l.msg.startsWith('partition lease')), 10_000);
      // Each partition said it alone, 16 × 10 lines in 3 ms in a trial, and the bus's lines had no role or pid.
      const ended = lines.filter((l) => l.msg.startsWith('partition lease'));
      expect(ended.map((l) => l.msg)).toEqual(['partition leases not renewed in time; stopping them']);
      expect(ended[0]!.fields).toMatchObject({ role: 'worker', pid: 4242, group: 'kupu-workers', partitions: [0, 1, 2, 3, 4, 5, 6, 7] });
    } finally {
      await bus.close();
    }
  }, 30_000);

  it('says the leases a Redis back empty took from it in one line, not one a partition', async () => {
    const { log, lines } = keptLines({ role: 'worker', pid: 4343 });
    const adapters = { bus: 'redis', redisUrl: `redis://127.0.0.1:${port}`, redisPrefix: `lost-${process.pid}`, busPartitions: 8 } as AdaptersConfig;
    const bus = await openBus(adapters, log);
    const admin = new Redis(port, '127.0.0.1');
    try {
      await bus.subscribe('hermod.kupu.v1', async () => undefined, { group: 'kupu-workers' });
      await eventually(async () => ((await admin.keys(`*lost-${process.pid}*:owner:*`)).length >= 8 ? true : undefined), 10_000);
      // As a Redis restarted without its data: every lease gone at once.
      await admin.flushall();
      await eventually(() => lines.some((l) => l.msg.startsWith('lost')), 10_000);
      await new Promise((r) => setTimeout(r, 500));
      const lost = lines.filter((l) => l.msg.startsWith('lost'));
      expect(lost.map((l) => l.msg)).toEqual(['lost partition leases']);
      expect(lost[0]!.fields).toMatchObject({ role: 'worker', pid: 4343, group: 'kupu-workers', partitions: [0, 1, 2, 3, 4, 5, 6, 7] });
    } finally {
      admin.disconnect();
      await bus.close();
    }
  }, 30_000);

  it('says the reads a Redis back empty failed (NOGROUP: its groups went with its data) once a minute each, with how many, not once a failure', async () => {
    const { log, lines } = keptLines({ role: 'core', pid: 4444 });
    const adapters = { bus: 'redis', redisUrl: `redis://127.0.0.1:${port}`, redisPrefix: `nogroup-${process.pid}`, busPartitions: 8 } as AdaptersConfig;
    const bus = await openBus(adapters, log);
    const admin = new Redis(port, '127.0.0.1');
    const handled: string[] = [];
    let publishing = true;
    try {
      await bus.subscribe(
        'hermod.kupu.v1',
        async (records) => {
          for (const r of records) handled.push(String(r.key));
          await new Promise((r) => setTimeout(r, 5));
        },
        { group: 'kupu-core' },
      );
      // Records on every partition all along, so each partition's worker is reading when the data goes.
      const publisher = (async () => {
        for (let i = 0; publishing; i++) {
          await bus
            .publish(
              'hermod.kupu.v1',
              Array.from({ length: 8 }, (_, k) => ({ key: `kia-ora-${i}-${k}`, value: Buffer.from('tēnā koe 👋🏽') })),
            )
            .catch(() => undefined);
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      await eventually(() => handled.length > 100, 10_000);
      // As a Redis restarted without its data, three times over a second and a half.
      for (let i = 0; i < 3; i++) {
        await admin.flushall();
        await new Promise((r) => setTimeout(r, 500));
      }
      const before = handled.length;
      await eventually(() => handled.length > before + 100, 10_000);
      publishing = false;
      await publisher;
      const failed = lines.filter((l) => l.msg.endsWith('failed; retrying'));
      expect(failed.some((l) => String((l.fields.err as Error | undefined)?.message).startsWith('NOGROUP'))).toBe(true);
      const said = new Map<string, number>();
      for (const l of failed) said.set(l.msg, (said.get(l.msg) ?? 0) + 1);
      expect(Object.fromEntries(said)).toEqual(Object.fromEntries([...said.keys()].map((msg) => [msg, 1])));
      // The first at once (how many came after it is said a minute later: rate-limited-warning.test.ts).
      for (const l of failed) expect(l.fields).toMatchObject({ role: 'core', pid: 4444, group: 'kupu-core', failures: 1 });
    } finally {
      publishing = false;
      admin.disconnect();
      await bus.close();
    }
  }, 30_000);
});
