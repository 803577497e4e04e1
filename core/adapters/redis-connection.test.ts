import net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../lib/log';
import { closeRedis, openRedis } from './redis-connection';

/** A logger that keeps its warnings. */
function keptWarnings(): { log: Logger; warnings: { msg: string; fields: Record<string, any> }[] } {
  const warnings: { msg: string; fields: Record<string, any> }[] = [];
  const log: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (msg, fields = {}) => void warnings.push({ msg, fields }),
    error: () => undefined,
    child: () => log,
  };
  return { log, warnings };
}

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
