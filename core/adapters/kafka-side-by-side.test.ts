import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { DeliveredRecord } from '../ports/bus';
import { createSideBySideRunner } from './kafka-side-by-side';

/**
 * The side-by-side runner against a stand-in of kafkajs's consumer and admin
 * (commits kept as the group's offset): the real broker runs the same runner
 * in kafka-bus-suite.ts; here the rebalances and fetches come exactly when a
 * test says.
 */
const record = (offset: number, key = `k${offset}`): KafkaMessage =>
  ({ offset: String(offset), key: Buffer.from(key), value: Buffer.from(`Kia ora ${key} 👋🏽`), timestamp: '0', attributes: 0, headers: {} }) as KafkaMessage;

const fetched = (messages: KafkaMessage[], partition = 0): EachBatchPayload =>
  ({
    batch: { topic: 't', partition, messages },
    resolveOffset: () => undefined,
    heartbeat: async () => undefined,
    isRunning: () => true,
    isStale: () => false,
  }) as unknown as EachBatchPayload;

function group(initial: { offset: string; metadata: string | null } = { offset: '-1', metadata: null }) {
  const state = { ...initial, paused: false };
  const consumer = {
    commitOffsets: async ([c]: { offset: string; metadata: string | null }[]) => {
      state.offset = c!.offset;
      state.metadata = c!.metadata;
    },
    pause: () => void (state.paused = true),
  };
  const admin = { fetchOffsets: async () => [{ topic: 't', partitions: [{ partition: 0, offset: state.offset, metadata: state.metadata }] }] };
  return { state, options: { topic: 't', group: 'g', consumer: consumer as never, admin: async () => admin as never } };
}

/** The runner on the stand-in group, with the tests' quick backoffs: 4 batches out, as a channel worker has. */
const runnerOn = (
  g: ReturnType<typeof group>,
  handler: (records: DeliveredRecord[]) => Promise<void>,
  extra: Partial<{ maxBatch: number; inFlight: number; closing: () => boolean; retryBackoffMs: number }> = {},
) => createSideBySideRunner({ ...g.options, handler, maxBatch: 256, retryBackoffMs: 5, heartbeatEveryMs: 20, closing: () => false, inFlight: 4, ...extra });

const settle = (ms = 30) => new Promise((r) => setTimeout(r, ms));

describe('Kafka batches side by side', () => {
  it('goes on with a batch out across a rebalance and commits nothing past it, though its copy in the next lane was let pass as in hand (review)', async () => {
    const g = group();
    // The channel worker's dedupe, in short: a job in hand in one batch is let pass in another.
    const inHand = new Set<string>();
    const sent: string[] = [];
    let firstTry = true;
    let failJ!: (e: Error) => void;
    const handler = async (records: DeliveredRecord[]) => {
      const todo = records.filter((r) => !inHand.has(r.key));
      for (const r of todo) inHand.add(r.key);
      try {
        for (const r of todo) {
          if (r.key === 'J' && firstTry) {
            firstTry = false;
            await new Promise<void>((_, reject) => (failJ = reject));
          }
          sent.push(r.key);
        }
      } finally {
        for (const r of todo) inHand.delete(r.key);
      }
    };
    const runner = runnerOn(g, handler, { maxBatch: 1 });
    await runner.eachBatch(fetched([record(0, 'J')]));
    await settle();
    // The partition goes to another member and comes back; kafkajs fetches again from the committed offset.
    runner.reassigned([]);
    runner.reassigned([0]);
    await runner.eachBatch(fetched([record(0, 'J'), record(1, 'K')]));
    await settle();
    expect(sent).toEqual(['K']);
    expect(g.state.offset).toBe('0');
    // The first send of J fails (hot state away a moment): tried again, sent, and only then is the position past it.
    failJ(new Error('hot state unavailable'));
    await settle(100);
    expect(sent).toEqual(['K', 'J']);
    expect(g.state.offset).toBe('2');
  });

  it('counts as redelivered every record the last owner had out, however kafkajs cuts its fetches (review)', async () => {
    // The last owner died with offsets 0 to 3 out: the commit says 0 was handed out once, and later ones up to 4.
    const g = group({ offset: '0', metadata: 'hermod:handed=1;upto=4' });
    const got: DeliveredRecord[] = [];
    const runner = runnerOn(g, async (records) => void got.push(...records));
    await runner.eachBatch(fetched([record(0), record(1)]));
    await runner.eachBatch(fetched([record(2), record(3)]));
    await runner.eachBatch(fetched([record(4)]));
    await settle();
    expect(got.map((r) => r.redeliveries)).toEqual([1, 1, 1, 1, 0]);
  });

  it('never moves the group back below what another member committed while this one was away (review)', async () => {
    const g = group();
    const runner = runnerOn(g, async () => undefined);
    await runner.eachBatch(fetched([record(0), record(1)]));
    await settle();
    expect(g.state.offset).toBe('2');
    // kafkajs restarted the consumer (or its session ran out): another member took the partition and committed up to 10.
    g.state.offset = '10';
    g.state.metadata = null;
    runner.reassigned([0]);
    await settle();
    expect(g.state.offset).toBe('10');
    await runner.eachBatch(fetched([record(10), record(11)]));
    await settle();
    expect(g.state.offset).toBe('12');
  });

  it('hands out no further than a bound behind a batch that keeps failing, and stops fetching while it closes (review)', async () => {
    const g = group();
    let closing = false;
    const handled: string[] = [];
    const runner = runnerOn(
      g,
      async (records) => {
        if (records[0]!.offset === '0') throw new Error('poison: the carrier refuses it every time');
        handled.push(records[0]!.offset);
      },
      { maxBatch: 1, retryBackoffMs: 1, inFlight: 2, closing: () => closing },
    );
    const fetching = runner.eachBatch(fetched(Array.from({ length: 100 }, (_, i) => record(i))));
    await settle(200);
    // Two out at a time; 2 × 16 slices kept behind the failing one, no more.
    expect(handled.length).toBe(31);
    expect(g.state.offset).toBe('0');
    closing = true;
    await runner.drain(1_000);
    await fetching;
    expect(g.state.paused).toBe(true);
    expect(g.state.offset).toBe('0');
  });
});
