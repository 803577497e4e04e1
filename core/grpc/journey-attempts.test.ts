import { describe, expect, it } from 'vitest';
import { journeyAttempts } from './journey-attempts';

const e = (status: string, carrierId = '') => ({ status, carrierId });

describe('journey attempts', () => {
  it('counts one hand-over for a message in several parts whose receipt names another part, however the events are ordered', () => {
    // The receipt for part 3 came before the carrier had answered every part.
    const events = [e('accepted'), e('queued'), e('sent'), e('received', 'part-3'), e('submitted', 'part-1')];
    expect(journeyAttempts(events)).toEqual({ attempts: 1, attemptOf: [0, 0, 0, 1, 1] });
  });

  it('counts a failover to a second carrier as a second hand-over, and gives its receipt to it', () => {
    const events = [e('accepted'), e('submitted', 'alpha-1'), e('sent'), e('submitted', 'charlie-9'), e('received', 'charlie-9')];
    expect(journeyAttempts(events)).toEqual({ attempts: 2, attemptOf: [0, 1, 1, 2, 2] });
  });

  it('counts the carrier id of a receipt as a hand-over when its submit was never recorded', () => {
    expect(journeyAttempts([e('accepted'), e('received', 'x-1'), e('read', 'x-1')])).toEqual({ attempts: 1, attemptOf: [0, 1, 1] });
    expect(journeyAttempts([e('accepted'), e('rejected')])).toEqual({ attempts: 0, attemptOf: [0, 0] });
  });
});
