import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../core/adapters/memory-bus';
import { createMemoryState } from '../core/adapters/memory-state';
import { topicName } from '../core/ports/bus';
import { decodeStatus, encodeJob, type OutboundJob } from '../core/ports/bus-payloads';
import { eventually } from '../test/support/eventually';
import type { Carrier } from './carrier';
import { startChannelWorker } from './channel-worker';
import { quietLog, smppTestKit } from './simulators/smpp-test-kit';
import { carrierConfig } from './sms/carrier-config-test-kit';
import { createSmppCarrier } from './sms/smpp-carrier';

const kit = smppTestKit();

/** The real SMPP carrier, counting the sends it has in hand at once. */
function counted(carrier: Carrier): { carrier: Carrier; most: () => number } {
  let now = 0;
  let most = 0;
  return {
    carrier: {
      ...carrier,
      name: carrier.name,
      send(job, onWritten, handover) {
        most = Math.max(most, ++now);
        return carrier.send(job, onWritten, handover).finally(() => now--);
      },
    },
    most: () => most,
  };
}

describe('a channel worker with a limit of sends at once', () => {
  it('hands the carrier no more messages at once than the limit, however many jobs wait, and sends every one', async () => {
    // The SMSC answers each submit after 5 ms, so sends overlap.
    const sim = await kit.simulator({ submitRespDelayMs: 5 });
    const smpp = createSmppCarrier(carrierConfig('spark', sim.port, { windowSize: 3, binds: 2 }), quietLog);
    kit.defer(() => smpp.close());
    const { carrier, most } = counted(smpp);
    const bus = createMemoryBus();
    const state = createMemoryState();
    const worker = await startChannelWorker({ channel: 'sms', bus, state, carrier, log: quietLog, maxSending: 6 });
    kit.defer(() => worker.stop());
    const submitted = new Set<string>();
    await bus.subscribe(
      topicName('status'),
      async (records) => {
        for (const u of records.map((r) => decodeStatus(r.value))) if (u.status === 'submitted') submitted.add(u.id);
      },
      { group: 'test' },
    );
    const jobs: OutboundJob[] = Array.from({ length: 120 }, (_, i) => ({
      id: randomUUID(),
      applicationId: 'acme',
      channel: 'sms',
      destination: `+6421${String(i).padStart(6, '0')}`,
      source: '4001',
      content: i % 2 ? `Kia ora, e hoa mā — ${i} 👋🏽` : `你好世界 ${i}`,
      acceptedAt: Date.now(),
    }));
    await bus.publish(
      topicName('sms'),
      jobs.map((j) => ({ key: j.id, value: encodeJob(j) })),
    );
    await eventually(async () => (submitted.size === jobs.length ? true : undefined), 15_000);
    expect(most()).toBeLessThanOrEqual(6);
    expect(most()).toBeGreaterThan(1);
  });
});
