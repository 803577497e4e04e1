import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusEvent } from '../ports/message-history';
import type { EncodedHistory, EncodedRows } from './encoded-history';
import { createJournaledHistory } from './journaled-history';
import { recordingHistory, recordingLogger } from './journal-test-support';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const event = (messageId: string, status: StatusEvent['status'], detail: string): StatusEvent => ({
  messageId,
  applicationId: 'acme',
  status,
  at: Date.UTC(2026, 10, 24, 9, 0, 0),
  detail,
  carrierId: '',
  errorCode: '',
});

describe('closing the journal', () => {
  it('hands the engine every row written before close, also those written while a flush was under way', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-close-'));
    dirs.push(dir);
    const rec = recordingHistory();
    // An engine that takes its time over each insert, and says when one has begun.
    let began!: () => void;
    const flushBegan = new Promise<void>((resolve) => (began = resolve));
    const slow = new Proxy(rec.history as object, {
      get: (target, key) =>
        key === 'insertEncoded'
          ? async (messages: EncodedRows, events: EncodedRows) => {
              began();
              await new Promise((r) => setTimeout(r, 200));
              return (target as EncodedHistory).insertEncoded(messages, events);
            }
          : (target as Record<string | symbol, unknown>)[key],
    }) as EncodedHistory;
    const journal = await createJournaledHistory({ inner: slow, dir, log: recordingLogger(), flushIntervalMs: 10 });
    await journal.appendEvents([event('m1', 'submitted', 'Kia ora, e hoa mā')]);
    await flushBegan;
    // Written while the flush of the first row is under way: the next flush's, or close's.
    await journal.appendEvents([event('m1', 'received', '你好世界 👋🏽')]);
    await journal.close();
    expect(rec.events.map((e) => (JSON.parse(e) as { status: string }).status)).toEqual(['submitted', 'received']);
    expect(rec.events.join('\n')).toContain('你好世界 👋🏽');
  });
});
