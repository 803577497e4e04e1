import { afterEach, describe, expect, it } from 'vitest';
import { runReplyCommand } from '../bin/cli/reply-cli';
import type { Config } from '../lib/config';
import { createSmppClient, type MoMessage } from '../workers/carriers/smpp/smpp-client';
import { createSmscSimulator, type SmscSimulator } from '../workers/simulators/smsc-simulator';
import { carrierConfig } from '../workers/sms/carrier-config-test-kit';
import { eventually } from './support/eventually';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

/** A simulated carrier's SMSC with an ESME (as hermod's SMS worker) bound to take what handsets send. */
async function simulatedCarrier(): Promise<{ simulator: SmscSimulator; replies: MoMessage[] }> {
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 5 });
  await simulator.start();
  cleanup.push(() => simulator.stop());
  const esme = createSmppClient({ host: '127.0.0.1', port: simulator.port, systemId: 'hermod', password: 'hermod' });
  cleanup.push(() => esme.close(0));
  const replies: MoMessage[] = [];
  esme.on('mo', (m) => void replies.push(m));
  await esme.ready();
  return { simulator, replies };
}

describe('hermod reply with a carriers file', () => {
  it('answers through a simulated carrier of the carriers file, the first or the one named, not the SMSC simulator of HERMOD_SMSC_PORT', async () => {
    const spark = await simulatedCarrier();
    const oneNz = await simulatedCarrier();
    const simulated = { outcomes: { delivered: 1, undeliverable: 0, expired: 0, rejected: 0 }, rate: 0, receiptDelayMs: 200 };
    const config = {
      // Where nothing listens: the carriers file's simulators are what `hermod start` runs.
      simulator: { host: '127.0.0.1', port: 1 },
      carriers: {
        file: 'carriers.yaml',
        carriers: [
          carrierConfig('spark', spark.simulator.port, { host: '127.0.0.1', simulated }),
          carrierConfig('one-nz', oneNz.simulator.port, { host: '127.0.0.1', simulated }),
        ],
      },
    } as unknown as Config;
    const out: string[] = [];
    const err: string[] = [];
    const say = (...args: string[]) =>
      runReplyCommand(
        config,
        args,
        (l) => void out.push(l),
        (l) => void err.push(l),
      );

    expect(await say('+6421000001', '4000', 'Kei te pai — 谢谢 👍🏽'), err.join('\n')).toBe(0);
    await eventually(() => (spark.replies.length === 1 ? true : undefined));
    expect(spark.replies[0]).toMatchObject({ source: '+6421000001', destination: '4000', text: 'Kei te pai — 谢谢 👍🏽' });
    expect(out.at(-1)).toBe('the simulated carrier spark delivered "Kei te pai — 谢谢 👍🏽" from +6421000001 to 4000');

    expect(await say('+6421000002', '4000', 'STOP', '--carrier', 'one-nz'), err.join('\n')).toBe(0);
    await eventually(() => (oneNz.replies.length === 1 ? true : undefined));
    expect(oneNz.replies[0]).toMatchObject({ source: '+6421000002', text: 'STOP' });

    expect(await say('+6421000003', '4000', 'Kia ora', '--carrier', 'vodafone')).toBe(2);
    expect(err.at(-1)).toBe('error: no simulated carrier is named "vodafone" (simulated carriers: spark, one-nz)');
    expect(spark.replies).toHaveLength(1);
  });
});
