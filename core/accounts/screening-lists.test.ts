import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import type { HotState } from '../ports/state';
import { keepScreeningListsLoaded } from './screening-lists';

type Screening = Pick<HotState, 'screeningMissing' | 'beginScreeningLoad' | 'markScreeningLoaded'>;

/** Hot state's markers, kept here: `lose` takes some away, as a Redis master restarting empty does. */
function fakeScreening(): Screening & { loaded: Set<string>; lose(scopes: string[]): void; failNextMarks: number } {
  const loaded = new Set<string>();
  const fake = {
    loaded,
    failNextMarks: 0,
    lose(scopes: string[]) {
      for (const s of scopes) loaded.delete(s);
    },
    async screeningMissing(scopes: readonly string[]) {
      return scopes.filter((s) => !loaded.has(s));
    },
    async beginScreeningLoad() {
      return 'token';
    },
    async markScreeningLoaded(scopes: readonly string[]) {
      if (fake.failNextMarks > 0) {
        fake.failNextMarks--;
        return false;
      }
      for (const s of scopes) loaded.add(s);
      return true;
    },
  };
  return fake;
}

const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(done()).toBe(true);
};

describe('keeping the opt-outs and block lists loaded into hot state', () => {
  const log = createLogger({ test: 'screening-lists' });
  const apps = ['', 'Ngā Kōrero', 'acme 🌿', '你好'];

  it('loads every scope at start, then only the scopes hot state has lost', async () => {
    const state = fakeScreening();
    const loads: string[][] = [];
    const lists = await keepScreeningListsLoaded({ state, scopes: async () => apps, load: async (s) => void loads.push([...s]), log, intervalMs: 10 });
    try {
      expect(loads).toEqual([apps]);
      state.lose(['acme 🌿']);
      await until(() => loads.length === 2);
      expect(loads[1]).toEqual(['acme 🌿']);
      expect([...state.loaded].sort()).toEqual([...apps].sort());
    } finally {
      lists.stop();
    }
  });

  it('loads again a scope whose load lost data while it ran (its mark refused)', async () => {
    const state = fakeScreening();
    let loads = 0;
    const lists = await keepScreeningListsLoaded({ state, scopes: async () => apps, load: async () => void loads++, log, intervalMs: 10 });
    try {
      state.failNextMarks = 1;
      state.lose(['Ngā Kōrero']);
      await until(() => state.loaded.has('Ngā Kōrero'));
      expect(loads).toBe(3);
    } finally {
      lists.stop();
    }
  });

  it('marks a new application’s lists at once, without loading anything from history', async () => {
    const state = fakeScreening();
    let loads = 0;
    const lists = await keepScreeningListsLoaded({ state, scopes: async () => apps, load: async () => void loads++, log, intervalMs: 60_000 });
    try {
      await lists.created('kōwhai 🌼');
      expect(await state.screeningMissing(['kōwhai 🌼'])).toEqual([]);
      expect(loads).toBe(1);
    } finally {
      lists.stop();
    }
  });
});
