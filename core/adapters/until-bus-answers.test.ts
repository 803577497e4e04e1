import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import type { Bus } from '../ports/bus';
import { untilBusAnswers } from './until-bus-answers';
import { quietLog } from '../../workers/simulators/smpp-test-kit';

/** A bus whose brokers answer from the `answersFrom`-th read of a lag on, refusing before with `refusal`. */
function busAnsweringFrom(answersFrom: number, refusal: () => Error) {
  const asked: string[] = [];
  const bus = {
    lag: async (topic: string, group: string) => {
      asked.push(`${topic} ${group}`);
      if (asked.length < answersFrom) throw refusal();
      return 0;
    },
  } as Pick<Bus, 'lag'>;
  return { bus, asked };
}

describe('a worker waiting for its bus before it logs in to its carriers', () => {
  it('waits while the brokers are out of reach, and goes on once they answer', async () => {
    const { bus, asked } = busAnsweringFrom(3, () => new HermodError('unavailable', 'Kafka reading the lag failed: connect ECONNREFUSED', { retryable: true }));
    await untilBusAnswers(bus, 'hermod.sms.v1', 'sms-workers', quietLog, 10);
    expect(asked).toEqual(['hermod.sms.v1 sms-workers', 'hermod.sms.v1 sms-workers', 'hermod.sms.v1 sms-workers']);
  });

  it('ends the start on an error waiting cannot mend (a refused SASL login, say)', async () => {
    const { bus } = busAnsweringFrom(99, () => new HermodError('internal', 'Kafka: SASL authentication failed', { retryable: false }));
    await expect(untilBusAnswers(bus, 'hermod.sms.v1', 'sms-workers', quietLog, 10)).rejects.toThrow(/SASL/);
  });
});
