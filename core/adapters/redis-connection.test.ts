import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { keptWarnings } from '../../lib/kept-warnings-test-kit';
import { Cluster, Redis } from 'ioredis';
import { closeRedis, openRedis, watchErrors } from './redis-connection';

async function portWithNothingOnIt(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a Redis connection that cannot connect', () => {
  it('says so every few seconds, naming Redis and its address, for as long as Redis is away', async () => {
    const port = await portWithNothingOnIt();
    const { log, warnings } = keptWarnings();
    const client = openRedis(`redis://:secret@127.0.0.1:${port}`, {}, log);
    try {
      await new Promise((resolve) => setTimeout(resolve, 11_500));
    } finally {
      await closeRedis(client);
    }
    // At the first failure, then every 5 s: not once and then silence.
    expect(warnings.length, JSON.stringify(warnings)).toBeGreaterThanOrEqual(3);
    expect(warnings[0]!.msg).toBe('redis connection error');
    for (const w of warnings) expect(w.fields.redis).toBe(`127.0.0.1:${port}`);
    expect(warnings.at(-1)!.msg).toBe('still waiting for Redis');
    expect(warnings.at(-1)!.fields.waitingSeconds).toBeGreaterThanOrEqual(10);
    expect(JSON.stringify(warnings)).not.toContain('secret');
  }, 20_000);
});

describe('a process whose Redis connections all wait for the same Redis', () => {
  it('says it is still waiting once every few seconds with how many connections wait, not once per connection', async () => {
    const port = await portWithNothingOnIt();
    const { log, warnings } = keptWarnings();
    // Core holds several (hot state, the bus's publisher and its readers): an outage of 4 minutes logged 322 lines.
    const clients = Array.from({ length: 4 }, () => openRedis(`redis://127.0.0.1:${port}`, {}, log));
    try {
      await new Promise((resolve) => setTimeout(resolve, 6_500));
    } finally {
      await Promise.all(clients.map((c) => closeRedis(c)));
    }
    const reminders = warnings.filter((w) => w.msg === 'still waiting for Redis');
    expect(reminders.map((w) => w.fields.connections)).toEqual([4]);
    expect(reminders[0]!.fields.redis).toBe(`127.0.0.1:${port}`);
  }, 20_000);
});

describe('a Redis Cluster failing a node over', () => {
  it('says the node left once, however often the slot maps it reads drop and list it again meanwhile', async () => {
    const { log, warnings } = keptWarnings();
    const port = await portWithNothingOnIt();
    const cluster = new Cluster([{ host: '127.0.0.1', port }], { lazyConnect: true });
    watchErrors(cluster, log);
    const node = new Redis({ host: '127.0.0.1', port: 7105, lazyConnect: true });
    for (let i = 0; i < 20; i++) {
      cluster.emit('-node', node);
      cluster.emit('+node', node);
    }
    cluster.emit('-node', node);
    expect(warnings.filter((w) => w.msg === 'redis node left the cluster map').map((w) => w.fields.redis)).toEqual(['127.0.0.1:7105']);
    cluster.disconnect();
    node.disconnect();
  });
});
