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
  it('is an error at the third crash in a row without a rejoin, and every third after', () => {
    const { log, errors } = errorsOf();
    const watch = watchConsumerCrashes(log, { group: 'sms-workers', topic: 'hermod.sms.v1' });
    const coordinator = new Error('KafkaJSNumberOfRetriesExceeded: The group coordinator is not available');
    watch.crashed(coordinator);
    watch.crashed(coordinator);
    expect(errors).toEqual([]);
    watch.crashed(coordinator);
    expect(errors).toEqual([
      {
        msg: 'Kafka consumer keeps crashing without rejoining its group',
        fields: { group: 'sms-workers', topic: 'hermod.sms.v1', crashes: 3, err: coordinator },
      },
    ]);
    for (let i = 0; i < 3; i++) watch.crashed(coordinator);
    expect(errors.map((e) => e.fields?.crashes)).toEqual([3, 6]);
  });

  it('stays quiet when the consumer rejoins between crashes, as after a leader moved', () => {
    const { log, errors } = errorsOf();
    const watch = watchConsumerCrashes(log, { group: 'core-statuses', topic: 'hermod.status.v1' });
    for (let i = 0; i < 10; i++) {
      watch.crashed(new Error('This server is not the leader for that topic-partition'));
      watch.crashed(new Error('The coordinator is loading'));
      watch.joined();
    }
    expect(errors).toEqual([]);
  });
});
