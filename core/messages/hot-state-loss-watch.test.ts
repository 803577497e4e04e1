import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import { watchHotStateLoss } from './hot-state-loss-watch';

/** Hot state as the Redis markers behave: the first look only marks; a later look finds markers gone since. */
function markedState() {
  let intact = false;
  let looked = false;
  return {
    lose: () => (intact = false),
    state: {
      dataLost: async () => {
        const lost = looked && !intact;
        looked = true;
        intact = true;
        return lost;
      },
    },
  };
}

const log = createLogger({ test: 'hot-state-loss-watch' });

describe('watching hot state for data it lost', () => {
  it('hears of a loss right after the core started, before its first timed look', async () => {
    const hot = markedState();
    let told = 0;
    const watch = await watchHotStateLoss({ state: hot.state, onLost: () => told++, log: log, intervalMs: 20 });
    try {
      // Messages accepted and a Redis back empty within the first interval.
      hot.lose();
      await new Promise((r) => setTimeout(r, 120));
      expect(told).toBe(1);
    } finally {
      watch.stop();
    }
  });

  it('says whether hot state was empty at its first look, and hears of no loss for it later', async () => {
    const empty = { dataLost: async () => looks++ === 0 };
    let looks = 0;
    let told = 0;
    const watch = await watchHotStateLoss({ state: empty, onLost: () => told++, log, intervalMs: 20 });
    try {
      expect(watch.emptyAtStart).toBe(true);
      await new Promise((r) => setTimeout(r, 80));
      expect(told).toBe(0);
    } finally {
      watch.stop();
    }
    const kept = await watchHotStateLoss({ state: markedState().state, onLost: () => told++, log, intervalMs: 20 });
    kept.stop();
    expect(kept.emptyAtStart).toBe(false);
  });

  it('starts even when hot state cannot be asked at first, and hears of a later loss', async () => {
    const hot = markedState();
    let away = true;
    let told = 0;
    const state = { dataLost: () => (away ? Promise.reject(new Error('ECONNREFUSED')) : hot.state.dataLost()) };
    const watch = await watchHotStateLoss({ state, onLost: () => told++, log: log, intervalMs: 20 });
    try {
      away = false;
      await new Promise((r) => setTimeout(r, 60));
      hot.lose();
      await new Promise((r) => setTimeout(r, 120));
      expect(told).toBe(1);
    } finally {
      watch.stop();
    }
  });
});
