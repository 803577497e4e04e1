import { afterEach } from 'vitest';
import { createMemoryBus } from '../core/adapters/memory-bus';
import { createMemoryState } from '../core/adapters/memory-state';
import { decodeStatus, encodeJob, type OutboundJob, type StatusUpdate } from '../core/ports/bus-payloads';
import { topicName, type Bus } from '../core/ports/bus';
import type { HotState } from '../core/ports/state';
import type { Logger } from '../lib/log';
import type { Channel } from '../lib/channels';
import { startWebhookReceiver } from './simulators/http-simulator-support';
import { eventually } from '../test/support/eventually';
import { quietLog } from './simulators/smpp-test-kit';

export interface PoolUnderTest {
  bus: Bus;
  state: HotState;
  /** Publishes jobs on the channel's topic, as core does. */
  publish(jobs: OutboundJob[]): Promise<void>;
  /** The status updates published so far about one message. */
  statusesOf(id: string): StatusUpdate[];
  /** The status updates about one message once one of them is `status` (any, if not given), or a rejection after `ms`. */
  statusesOnce(id: string, status?: StatusUpdate['status'], ms?: number): Promise<StatusUpdate[]>;
}

type StartPool = (deps: { bus: Bus; state: HotState; log: Logger }) => Promise<{ stop(): Promise<void> }>;

/**
 * Test helpers for a channel's worker pool: the pool runs on an in-process bus
 * and state, every status update it publishes is collected, and everything
 * made (pool, simulators, webhook receivers) is stopped after each test.
 */
export function channelPoolTestKit() {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  /** Starts the simulator `create` makes, with a plain-HTTP webhook receiver for it to post to. */
  async function simulator<S extends { start(): Promise<unknown>; stop(): Promise<void> }>(create: (webhookUrl: string) => S): Promise<S> {
    const receiver = await startWebhookReceiver({ tls: false });
    cleanup.push(() => receiver.close());
    const sim = create(receiver.url);
    await sim.start();
    cleanup.push(() => sim.stop());
    return sim;
  }

  /** The pool on an in-process bus, or on the one `options.bus` opens (closed after the test). */
  async function pool(channel: Channel, start: StartPool, options: { bus?: () => Bus } = {}): Promise<PoolUnderTest> {
    const bus = options.bus?.() ?? createMemoryBus();
    const state = createMemoryState();
    const running = await start({ bus, state, log: quietLog });
    cleanup.push(async () => {
      await running.stop();
      await bus.close();
      await state.close();
    });
    const updates: StatusUpdate[] = [];
    await bus.subscribe(topicName('status'), async (records) => void updates.push(...records.map((r) => decodeStatus(r.value))), { group: 'test-status' });
    const statusesOf = (id: string) => updates.filter((u) => u.id === id);
    return {
      bus,
      state,
      publish: (jobs) =>
        bus.publish(
          topicName(channel),
          jobs.map((j) => ({ key: j.id, value: encodeJob(j) })),
        ),
      statusesOf,
      statusesOnce: (id, status, ms = 3000) => eventually(() => (statusesOf(id).some((u) => !status || u.status === status) ? statusesOf(id) : undefined), ms),
    };
  }

  return { simulator, pool, defer: (fn: () => Promise<unknown>) => cleanup.push(fn) };
}
