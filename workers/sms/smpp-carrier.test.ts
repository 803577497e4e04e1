import { describe, expect, it } from 'vitest';
import { smppBindUp } from '../../lib/metrics';
import { quietLog, smppTestKit } from '../simulators/smpp-test-kit';
import { carrierConfig } from './carrier-config-test-kit';
import { createSmppCarrier } from './smpp-carrier';
import { isHeldBack } from '../carrier';

const kit = smppTestKit();

const bindUp = async (bind: string): Promise<number | undefined> => (await smppBindUp.get()).values.find((v) => v.labels.bind === bind)?.value;

describe('SMPP carrier metrics', () => {
  it('shows its bind up while bound, down once the SMSC goes away, and drops it when closed on purpose', async () => {
    const sim = await kit.simulator();
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    const bind = `hermod@localhost:${sim.port}`;
    await carrier.ready();
    expect(await bindUp(bind)).toBe(1);

    await sim.stop();
    for (let i = 0; i < 300 && (await bindUp(bind)) !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await bindUp(bind)).toBe(0);

    await carrier.close();
    expect(await bindUp(bind)).toBeUndefined();
  });

  it('shows no bind error for a message withdrawn unsent on purpose (a paused campaign, the submit limit), as that is normal flow', async () => {
    const sim = await kit.simulator();
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    await carrier.ready();
    const job = { id: 'm-1', destination: '+6421000001', source: 'SHOP', content: 'Kia ora — 你好 👋' } as never;
    const err = await carrier.send(job, undefined, { holdBack: () => true }).catch((e: unknown) => e);
    expect(isHeldBack(err)).toBe(true);
    expect(carrier.snapshots().map((s) => s.lastError)).toEqual(['']);
  });
});
