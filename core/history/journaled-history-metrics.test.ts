import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createChdbHistory } from '../adapters/chdb-history';
import { event, message } from '../adapters/history-contract';
import { createLogger } from '../../lib/log';
import { historyFlushFailures } from '../../lib/metrics';
import { createJournaledHistory } from './journaled-history';

const log = createLogger({ test: 'journaled-history-metrics' });
const failures = async (): Promise<number> => (await historyFlushFailures.get()).values[0]?.value ?? 0;

describe('journaled history metrics', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  it('counts each flush into the engine that fails, and none that succeed', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-metrics-'));
    dirs.push(dataDir);
    const inner = await createChdbHistory({ dataDir });
    const journaled = await createJournaledHistory({ inner, dir: path.join(dataDir, 'journal'), log, flushIntervalMs: 60_000 });
    const before = await failures();
    const m = message({ content: 'Kia ora, e hoa mā — tēnā koe' });
    await journaled.insertMessages([m], [event(m, 'accepted', m.acceptedAt)]);
    await journaled.flush();
    expect(await failures()).toBe(before);

    // The engine goes away under the journal: the rows wait, and every failed try is counted.
    await inner.close();
    await journaled.appendEvents([event(m, 'queued', m.acceptedAt + 1)]);
    await expect(journaled.flush()).rejects.toMatchObject({ code: 'unavailable' });
    await expect(journaled.flush()).rejects.toMatchObject({ code: 'unavailable' });
    expect(await failures()).toBe(before + 2);
    await journaled.close().catch(() => undefined);
  });
});
