import { describe, expect, it } from 'vitest';
import { createCarrierPace } from './carrier-pace';

describe('the campaign fan-out’s pace', () => {
  it('lets the configured backlog wait until it has seen the carrier send, then two seconds of what it sends', () => {
    let t = 0;
    const pace = createCarrierPace({ maxBacklog: 5000, now: () => t });
    expect(pace.target()).toBe(5000);
    // A carrier taking 100 a second: the backlog falls by 10 every 100 ms while the fan-out waits.
    pace.startWait();
    for (let backlog = 5100; backlog > 4000; backlog -= 10) {
      pace.observe(backlog);
      t += 100;
    }
    expect(pace.target()).toBe(200);
  });

  it('keeps the configured backlog for a fast carrier, and never less than the minimum for a stalled one', () => {
    let t = 0;
    const fast = createCarrierPace({ maxBacklog: 5000, now: () => t });
    fast.startWait();
    for (let backlog = 6000; backlog > 5000; backlog -= 800) {
      fast.observe(backlog);
      t += 100;
    }
    expect(fast.target()).toBe(5000);
    const stalled = createCarrierPace({ maxBacklog: 5000, minBacklog: 300, now: () => t });
    stalled.startWait();
    for (let i = 0; i < 20; i++) {
      stalled.observe(5100);
      t += 100;
    }
    expect(stalled.target()).toBe(300);
  });

  it('learns nothing from a backlog that grew (messages added meanwhile) nor across two waits', () => {
    let t = 0;
    const pace = createCarrierPace({ maxBacklog: 5000, now: () => t });
    pace.startWait();
    pace.observe(5100);
    t += 100;
    pace.observe(5600);
    pace.startWait();
    t += 10_000;
    pace.observe(1000);
    expect(pace.target()).toBe(5000);
  });
});
