import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { busLag, busLagUnread } from '../../lib/metrics';
import { createMemoryBus } from '../adapters/memory-bus';
import type { Bus } from '../ports/bus';
import { topicName } from '../ports/bus';
import { createBusLagMonitor } from './bus-lag-monitor';

const SMS = { topic: topicName('sms'), group: 'sms-workers' };

const gauge = async (metric: typeof busLag | typeof busLagUnread): Promise<number | undefined> =>
  (await metric.get()).values.find((v) => v.labels.topic === SMS.topic && v.labels.group === SMS.group)?.value;

/** A memory bus whose lag reads fail while `down` is set, like a Kafka bus while its brokers are away; with the log lines written. */
function setUp() {
  const memory = createMemoryBus();
  const broker = { down: false, hangs: false };
  const bus: Bus = {
    ...memory,
    lag: (topic, group) =>
      broker.hangs
        ? new Promise<number>(() => undefined)
        : broker.down
          ? Promise.reject(new HermodError('unavailable', 'Kafka reading the lag failed: Connection refused'))
          : memory.lag(topic, group),
  };
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const write = (level: string) => (msg: string, fields?: Record<string, unknown>) => void lines.push({ level, msg, fields: fields ?? {} });
  const log = { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), child: () => log } as unknown as Logger;
  let now = 1_000_000;
  const monitor = createBusLagMonitor(bus, log, { now: () => now, readTimeoutMs: 50 });
  const sms = (n: number) =>
    bus.publish(
      SMS.topic,
      Array.from({ length: n }, (_, i) => ({ key: `+6421${i}`, value: Buffer.from('Kia ora') })),
    );
  const subscribe = () => bus.subscribe(SMS.topic, () => new Promise<void>(() => undefined), { group: SMS.group });
  const warnings = () => lines.filter((l) => l.level === 'warn' && l.fields.topic === SMS.topic);
  return { broker, monitor, lines, warnings, sms, subscribe, advance: (ms: number) => void (now += ms) };
}

describe('bus lag monitor', () => {
  it('reads the backlog of every channel’s workers, not the SMS ones’ alone', async () => {
    const memory = createMemoryBus();
    const watched = createBusLagMonitor(memory, { debug() {}, info() {}, warn() {}, error() {}, child: () => undefined } as unknown as Logger);
    for (const channel of ['email', 'wab', 'rcs', 'mms']) {
      await memory.subscribe(topicName(channel), () => new Promise<void>(() => undefined), { group: `${channel}-workers` });
      await memory.publish(topicName(channel), [
        { key: 'a', value: Buffer.from('Kia ora — 你好 👋🏽') },
        { key: 'b', value: Buffer.from('Tēnā koe') },
      ]);
    }
    await watched.sample();
    const lags = (await busLag.get()).values.filter((v) => String(v.labels.group).endsWith('-workers') && v.labels.group !== 'sms-workers');
    expect(Object.fromEntries(lags.map((v) => [v.labels.group, v.value]))).toEqual({
      'email-workers': 2,
      'wab-workers': 2,
      'rcs-workers': 2,
      'mms-workers': 2,
    });
  });

  it('counts a read that never answers (Redis stopped, its client waiting to reconnect) as unread, and warns', async () => {
    const { broker, monitor, sms, subscribe, advance, warnings } = setUp();
    await subscribe();
    await sms(2);
    await monitor.sample();
    expect(await gauge(busLag)).toBe(2);

    broker.hangs = true;
    for (let i = 0; i < 3; i++) {
      advance(5_000);
      // The lag stayed at its last value and the unread seconds at 0 through a 4-minute outage: no read ever failed.
      await monitor.sample();
    }
    expect(await gauge(busLag)).toBeUndefined();
    expect(await gauge(busLagUnread)).toBe(15);
    expect(warnings().map((w) => w.msg)).toEqual(['could not read bus lag']);

    broker.hangs = false;
    advance(5_000);
    await monitor.sample();
    expect(await gauge(busLag)).toBe(2);
    expect(await gauge(busLagUnread)).toBe(0);
  });

  it('drops the lag of a group it cannot read instead of showing its last value, and says for how long it has not read it', async () => {
    const { broker, monitor, sms, subscribe, advance } = setUp();
    await subscribe();
    await sms(3);
    await monitor.sample();
    expect(await gauge(busLag)).toBe(3);
    expect(await gauge(busLagUnread)).toBe(0);

    broker.down = true;
    advance(5_000);
    await monitor.sample();
    advance(15_000);
    await monitor.sample();
    expect(await gauge(busLag)).toBeUndefined();
    expect(await gauge(busLagUnread)).toBe(20);

    broker.down = false;
    advance(5_000);
    await monitor.sample();
    expect(await gauge(busLag)).toBe(3);
    expect(await gauge(busLagUnread)).toBe(0);
  });

  it('warns of an outage once reads fail twice in a row, at most once a minute while it lasts, and again for a later outage', async () => {
    const { broker, monitor, lines, warnings, advance } = setUp();
    await monitor.sample();
    broker.down = true;
    // One failed read (a broker electing a leader as core starts) is no outage.
    await monitor.sample();
    expect(warnings()).toHaveLength(0);
    for (let i = 0; i < 13; i++) {
      advance(5_000);
      await monitor.sample();
    }
    expect(warnings().map((l) => [l.msg, l.fields.unreadForSeconds])).toEqual([
      ['could not read bus lag', 5],
      ['could not read bus lag', 65],
    ]);
    expect(warnings()[0]!.fields.err).toBeInstanceOf(HermodError);

    broker.down = false;
    advance(5_000);
    await monitor.sample();
    expect(lines.filter((l) => l.msg === 'bus lag read again' && l.fields.topic === SMS.topic).map((l) => l.fields.unreadForSeconds)).toEqual([70]);

    broker.down = true;
    for (let i = 0; i < 2; i++) {
      advance(5_000);
      await monitor.sample();
    }
    expect(warnings()).toHaveLength(3);
  });
});
