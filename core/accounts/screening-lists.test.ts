import { describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import type { HotState } from '../ports/state';
import { keepScreeningListsLoaded } from './screening-lists';

type Screening = Pick<HotState, 'screeningMissing' | 'screeningRefused' | 'beginScreeningLoad' | 'markScreeningLoaded'>;

/**
 * Hot state's markers, kept here: `lose` takes some away, as a Redis master
 * restarting empty does; `read` is a send screened against a scope, refused
 * while its marker is gone; `asked` keeps the scopes of each question about markers.
 */
function fakeScreening(): Screening & {
  loaded: Set<string>;
  lose(scopes: string[]): void;
  read(scope: string): boolean;
  failNextMarks: number;
  asked: string[][];
} {
  const loaded = new Set<string>();
  let refused = new Set<string>();
  const fake = {
    loaded,
    failNextMarks: 0,
    asked: [] as string[][],
    lose(scopes: string[]) {
      for (const s of scopes) loaded.delete(s);
    },
    read(scope: string) {
      if (!loaded.has(scope)) refused.add(scope);
      return loaded.has(scope);
    },
    async screeningMissing(scopes: readonly string[]) {
      fake.asked.push([...scopes]);
      return scopes.filter((s) => !loaded.has(s));
    },
    async screeningRefused() {
      const taken = [...refused];
      refused = new Set();
      return taken;
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
  /** Keeps the fake's lists loaded, looking every 10 ms, sweeping every scope every `sweepEveryMs`; `loads` the scopes of each load. */
  const keepLoaded = async (sweepEveryMs: number) => {
    const state = fakeScreening();
    const loads: string[][] = [];
    const lost = { times: 0 };
    const lists = await keepScreeningListsLoaded({
      state,
      scopes: async () => apps,
      load: async (s) => void loads.push([...s]),
      log,
      onLost: () => void lost.times++,
      intervalMs: 10,
      sweepEveryMs,
    });
    return { state, loads, lists, lost };
  };

  it('loads every scope at start, then only the scopes hot state has lost, found by its sweep, and says hot state lost data', async () => {
    const { state, loads, lists, lost } = await keepLoaded(10);
    try {
      expect(loads).toEqual([apps]);
      expect(lost.times).toBe(0);
      state.lose(['acme 🌿']);
      await until(() => loads.length === 2);
      expect(loads[1]).toEqual(['acme 🌿']);
      // Whatever else hot state held went too (the answers of Idempotency-Keys): intake looks in history again.
      expect(lost.times).toBe(1);
      expect([...state.loaded].sort()).toEqual([...apps].sort());
    } finally {
      lists.stop();
    }
  });

  it('loads again a scope whose load lost data while it ran (its mark refused)', async () => {
    const state = fakeScreening();
    let loads = 0;
    const lists = await keepScreeningListsLoaded({ state, scopes: async () => apps, load: async () => void loads++, log, intervalMs: 10, sweepEveryMs: 10 });
    try {
      state.failNextMarks = 1;
      state.lose(['Ngā Kōrero']);
      await until(() => state.loaded.has('Ngā Kōrero'));
      expect(loads).toBe(3);
    } finally {
      lists.stop();
    }
  });

  it('loads a scope a send was refused for at the next look, without asking hot state about every scope', async () => {
    const { state, loads, lists } = await keepLoaded(60_000);
    try {
      state.lose(['Ngā Kōrero', '你好']);
      // Only one of the two lost is needed by a send; an application another core created is refused too.
      expect(state.read('Ngā Kōrero')).toBe(false);
      expect(state.read('kōwhai 🌼')).toBe(false);
      await until(() => loads.length === 2);
      expect(loads[1]!.sort()).toEqual(['Ngā Kōrero', 'kōwhai 🌼'].sort());
      expect(state.read('Ngā Kōrero')).toBe(true);
      // The other waits for the sweep (or a send); hot state was asked about the refused scopes only.
      expect(state.loaded.has('你好')).toBe(false);
      expect(new Set(state.asked.flat())).toEqual(new Set(['Ngā Kōrero', 'kōwhai 🌼']));
    } finally {
      lists.stop();
    }
  });

  it('keeps a refused scope whose load lost data while it ran, and loads it again at the next look', async () => {
    const { state, loads, lists } = await keepLoaded(60_000);
    try {
      state.failNextMarks = 1;
      state.lose(['acme 🌿']);
      expect(state.read('acme 🌿')).toBe(false);
      await until(() => state.loaded.has('acme 🌿'));
      expect(loads.slice(1)).toEqual([['acme 🌿'], ['acme 🌿']]);
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
