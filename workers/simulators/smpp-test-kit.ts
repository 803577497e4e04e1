import { once } from 'node:events';
import { afterEach } from 'vitest';
import type { Logger } from '../../lib/log';
import { createSmppClient, type SmppClient, type SmppClientOptions } from '../carriers/smpp/smpp-client';
import { createSmscSimulator, type SmscSimulator, type SmscSimulatorOptions } from './smsc-simulator';

/** A logger that keeps quiet (tests provoke disconnects on purpose). */
export const quietLog: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => quietLog,
};

/**
 * Test helpers for a real SMPP client talking to a real simulator over
 * 127.0.0.1; everything made is closed after each test.
 */
export function smppTestKit() {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  });

  async function simulator(options: SmscSimulatorOptions = {}): Promise<SmscSimulator> {
    const sim = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 5, ...options });
    await sim.start();
    cleanup.push(() => sim.stop());
    return sim;
  }

  /** A client bound to `sim` (awaits the bind unless `bound: false`). */
  async function client(sim: Pick<SmscSimulator, 'port'>, options: Partial<SmppClientOptions> = {}, bound = true): Promise<SmppClient> {
    const c = createSmppClient({
      host: '127.0.0.1',
      port: sim.port,
      systemId: 'hermod',
      password: 'secret',
      reconnectMinMs: 10,
      reconnectMaxMs: 50,
      log: quietLog,
      ...options,
    });
    cleanup.push(() => c.close(200));
    if (bound) await c.ready();
    return c;
  }

  return { simulator, client, defer: (fn: () => Promise<unknown>) => cleanup.push(fn) };
}

export { once };
