import { describe, expect, it } from 'vitest';
import type { Logger } from '../../lib/log';
import { watchConsumerCrashes } from './kafka-crash-watch';

function errorsOf() {
  const errors: { msg: string; fields?: Record<string, unknown> }[] = [];
  const none = (): void => undefined;
  const log: Logger = { debug: none, info: none, warn: none, error: (msg, fields) => void errors.push({ msg, fields }), child: () => log };
  return { log, errors };
}

describe('a Kafka consumer that keeps crashing', () => {
  it('is an error once it has crashed without a rejoin for a minute, and again every minute while that lasts', () => {
    const { log, errors } = errorsOf();
    let t = 1_000_000;
    const watch = watchConsumerCrashes(log, { group: 'sms-workers', topic: 'hermod.sms.v1' }, { now: () => t });
    const coordinator = new Error('KafkaJSNumberOfRetriesExceeded: The group coordinator is not available');
    // kafkajs restarts it every 10 s or so: five crashes in the first 50 s say nothing.
    for (let i = 0; i < 6; i++, t += 10_000) watch.crashed(coordinator);
    expect(errors).toEqual([]);
    watch.crashed(coordinator);
    expect(errors).toEqual([
      {
        msg: 'Kafka consumer keeps crashing without rejoining its group',
        fields: { group: 'sms-workers', topic: 'hermod.sms.v1', crashes: 7, crashingForMs: 60_000, err: coordinator },
      },
    ]);
    for (let i = 0; i < 12; i++) {
      t += 10_000;
      watch.crashed(coordinator);
    }
    expect(errors.map((e) => e.fields?.crashingForMs)).toEqual([60_000, 120_000, 180_000]);
  });

  it('stays quiet through a broker restarted on purpose, 20 s of crashes and then a rejoin, however often', () => {
    const { log, errors } = errorsOf();
    let t = 1_000_000;
    const watch = watchConsumerCrashes(log, { group: 'core-statuses', topic: 'hermod.status.v1' }, { now: () => t });
    for (let restart = 0; restart < 10; restart++) {
      for (let i = 0; i < 20; i++, t += 1_000) watch.crashed(new Error('KafkaJSNumberOfRetriesExceeded: Connection error: connect ECONNREFUSED'));
      watch.joined();
      t += 60_000;
    }
    expect(errors).toEqual([]);
  });

  it('stays quiet when the consumer rejoins between crashes, as after a leader moved', () => {
    const { log, errors } = errorsOf();
    let t = 1_000_000;
    const watch = watchConsumerCrashes(log, { group: 'core-statuses', topic: 'hermod.status.v1' }, { now: () => t });
    for (let i = 0; i < 10; i++) {
      watch.crashed(new Error('This server is not the leader for that topic-partition'));
      t += 40_000;
      watch.crashed(new Error('The coordinator is loading'));
      watch.joined();
    }
    expect(errors).toEqual([]);
  });
});
