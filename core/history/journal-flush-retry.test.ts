import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EncodedHistory, EncodedRows } from './encoded-history';
import { createJournaledHistory } from './journaled-history';
import { recordingHistory, recordingLogger } from './journal-test-support';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('a history flush the engine refuses halfway', () => {
  it('hands each event row over once when the engine took the events and refused the message rows', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-retry-'));
    dirs.push(dir);
    const rec = recordingHistory();
    // As the SQL history does: events first, then messages, two inserts; the messages' one fails once.
    let refuseMessages = true;
    const halfway = new Proxy(rec.history as object, {
      get: (target, key) =>
        key === 'insertEncoded'
          ? async (messages: EncodedRows, events: EncodedRows) => {
              const inner = target as EncodedHistory;
              if (events.length > 0) await inner.insertEncoded('', events);
              if (messages.length === 0) return;
              if (refuseMessages) {
                refuseMessages = false;
                throw new Error('Too many parts (simulated)');
              }
              await inner.insertEncoded(messages, '');
            }
          : (target as Record<string | symbol, unknown>)[key],
    }) as EncodedHistory;
    const journal = await createJournaledHistory({ inner: halfway, dir, log: recordingLogger(), flushIntervalMs: 60_000 });
    const text = 'Kia ora, e hoa mā 👋🏽 你好';
    await journal.insertEncoded(
      JSON.stringify({ id: 'm1', content: text }),
      [JSON.stringify({ message_id: 'm1', status: 'accepted' }), JSON.stringify({ message_id: 'm1', status: 'queued' })].join('\n'),
    );
    await expect(journal.flush()).rejects.toThrow(/Too many parts/);
    await journal.flush();
    await journal.close();
    expect(rec.messages.map((r) => JSON.parse(r) as { id: string; content: string })).toEqual([{ id: 'm1', content: text }]);
    expect(rec.events.map((r) => (JSON.parse(r) as { status: string }).status)).toEqual(['accepted', 'queued']);
  });
});
