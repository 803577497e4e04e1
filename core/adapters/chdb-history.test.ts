import fs from 'node:fs';
import os from 'node:os';
import { Session, drainPending } from 'chdb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { History } from '../ports/history';
import { campaignMessageId, campaignMessageRange } from '../campaigns/campaign-message-ids';
import { messageRow } from '../history/rows';
import type { EncodedHistory } from '../history/encoded-history';
import { REPORT_BLOCK_ROWS } from '../history/campaign-queries';
import { createChdbHistory } from './chdb-history';
import { referenceReportJson } from '../../test/support/report-json-reference';
import { describeHistoryContract, event, message } from './history-contract';

const tempDir = (): string => fs.mkdtempSync(os.tmpdir() + '/hermod-');

describeHistoryContract('chDB', () => {
  const dataDir = tempDir();
  return {
    open: () => createChdbHistory({ dataDir }),
    dispose: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    exec: async (statements) => {
      const session = new Session(`${dataDir}/history`);
      try {
        for (const statement of statements) await session.queryAsync(statement);
      } finally {
        session.close();
        await drainPending();
      }
    },
  };
});

describe('chDB history', () => {
  let dataDir: string;
  let history: History | undefined;

  afterEach(async () => {
    await history?.close();
    history = undefined;
    vi.restoreAllMocks();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps its database in the history folder of the data directory', async () => {
    dataDir = tempDir();
    history = await createChdbHistory({ dataDir });
    expect(fs.existsSync(`${dataDir}/history`)).toBe(true);
  });

  it('runs the embedded engine with the memory limit and cache sizes it is given, and small defaults', async () => {
    const serverSettings = async (): Promise<Record<string, string>> => {
      // A second session on the same directory shares the engine the history opened.
      const peek = new Session(`${dataDir}/history`);
      const names = ['max_server_memory_usage', 'mark_cache_size', 'primary_index_cache_size', 'uncompressed_cache_size', 'query_condition_cache_size'];
      try {
        const text = (await peek.queryAsync(`SELECT name, value FROM system.server_settings WHERE name IN ('${names.join("','")}') FORMAT TSV`)).text();
        return Object.fromEntries(
          text
            .trim()
            .split('\n')
            .map((l) => l.split('\t') as [string, string]),
        );
      } finally {
        peek.close();
      }
    };
    dataDir = tempDir();
    history = await createChdbHistory({ dataDir, maxMemoryBytes: 300 * 1024 * 1024, cacheBytes: 32 * 1024 * 1024 });
    expect(await serverSettings()).toEqual({
      max_server_memory_usage: String(300 * 1024 * 1024),
      mark_cache_size: String(32 * 1024 * 1024),
      primary_index_cache_size: String(32 * 1024 * 1024),
      uncompressed_cache_size: '0',
      query_condition_cache_size: String(8 * 1024 * 1024),
    });
    await history.close();
    fs.rmSync(dataDir, { recursive: true, force: true });

    dataDir = tempDir();
    history = await createChdbHistory({ dataDir });
    const defaults = await serverSettings();
    expect(Number(defaults.max_server_memory_usage)).toBe(512 * 1024 * 1024);
    expect(Number(defaults.mark_cache_size)).toBe(64 * 1024 * 1024);
  });

  it('writes a batch of messages with one insert per table, whatever its size', async () => {
    dataDir = tempDir();
    history = await createChdbHistory({ dataDir });
    const insert = vi.spyOn(Session.prototype, 'insert');
    const batch = Array.from({ length: 300 }, () => message());
    await history.insertMessages(
      batch,
      batch.map((m) => event(m, 'accepted', m.acceptedAt)),
    );
    await history.appendEvents(batch.map((m) => event(m, 'queued', m.acceptedAt + 1)));
    expect(insert).toHaveBeenCalledTimes(3);
  });

  it('leaves messages accepted before the recovery window out of the unfinished list', async () => {
    dataDir = tempDir();
    const now = Date.UTC(2030, 5, 1);
    history = await createChdbHistory({ dataDir, now: () => now });
    const old = message({ acceptedAt: now - 71 * 86_400_000 });
    const recent = message({ acceptedAt: now - 69 * 86_400_000 });
    await history.insertMessages([old, recent], [event(old, 'accepted', old.acceptedAt), event(recent, 'accepted', recent.acceptedAt)]);
    expect((await history.listUnfinished(10)).map((m) => m.id)).toEqual([recent.id]);
  });

  it('streams large campaign reports in blocks, two at once while writes go on, and stops a read its reader leaves', async () => {
    dataDir = tempDir();
    const h: EncodedHistory = await createChdbHistory({ dataDir });
    history = h;
    // More than one engine block (65,536 rows at most): the paused reader still has a block to read after the whole one.
    const members = 75_000;
    for (let from = 0; from < members; from += 25_000) {
      const rows: string[] = [];
      for (let p = from; p < from + 25_000; p++) {
        const m = message({ id: campaignMessageId(505, p), numericId: 11 * 4096 + p, destination: `+642100${p}`, content: `Kia ora ${p}` });
        rows.push(JSON.stringify(messageRow(m)));
      }
      await h.insertEncoded(rows.join('\n'), '');
    }
    const { lo, hi } = campaignMessageRange(505, 0, members);

    // A reader that has taken one block and waits: a message is stored and read meanwhile.
    const paused = h.campaigns.reportRows(lo, hi)[Symbol.asyncIterator]();
    const first = await paused.next();
    expect(first.done).toBe(false);
    const greeting = message({ content: 'Kia ora, e hoa mā — tēnā koe 👋🏽' });
    await h.insertMessages([greeting], [event(greeting, 'accepted', greeting.acceptedAt)]);
    expect((await h.getMessage(greeting.applicationId, greeting.id))?.content).toBe(greeting.content);

    // A second report read whole meanwhile, in blocks, every member once in order.
    const sizes: number[] = [];
    let next = 0;
    for await (const batch of h.campaigns.reportRows(lo, hi)) {
      sizes.push(batch.length);
      for (const r of batch) expect(r.position).toBe(next++);
    }
    expect(next).toBe(members);
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(65_536);

    // The first goes on where it was, then stops early.
    const second = await paused.next();
    expect(second.done).toBe(false);
    expect(second.value?.[0]?.position).toBe(first.value?.length);
    await paused.return?.(undefined);
    expect(await h.campaigns.reportRange(campaignMessageRange(505, 7, 9).lo, campaignMessageRange(505, 7, 9).hi)).toHaveLength(2);
  }, 120_000);

  it("writes a large report's JSON over many engine blocks as one text, byte for byte the rows the service formatted before", async () => {
    dataDir = tempDir();
    const h: EncodedHistory = await createChdbHistory({ dataDir });
    history = h;
    // More than one engine block, and some nine blocks of REPORT_BLOCK_ROWS of text.
    const members = 70_000;
    for (let from = 0; from < members; from += 35_000) {
      const rows: string[] = [];
      for (let p = from; p < from + 35_000; p++) {
        const destination = p % 1000 === 7 ? `mā "${p}" 测试 👋🏽\t` : `+642100${p}`;
        rows.push(
          JSON.stringify(messageRow(message({ id: campaignMessageId(707, p), numericId: 13 * 4096 + p, destination, acceptedAt: 1_764_000_000_000 + p }))),
        );
      }
      await h.insertEncoded(rows.join('\n'), '');
    }
    const { lo, hi } = campaignMessageRange(707, 0, members);
    const look = { listName: 'Hui ā-tau 👋🏽', utcOffsetMinutes: 780 };
    const chunks: Uint8Array[] = [];
    for await (const bytes of h.campaigns.reportJson(lo, hi, look)) chunks.push(bytes);
    expect(chunks.length).toBeGreaterThan(1);
    // The engine hands the text over a few thousand rows at a time: its memory for a read is a block's, not tens of MB.
    const rowsIn = (b: Uint8Array): number => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8').split('"message_id":').length - 1;
    expect(Math.max(...chunks.map(rowsIn))).toBeLessThanOrEqual(REPORT_BLOCK_ROWS);
    const expected = referenceReportJson(await h.campaigns.reportRange(lo, hi), look.listName, look.utcOffsetMinutes);
    expect(Buffer.concat(chunks).equals(Buffer.from(expected, 'utf8'))).toBe(true);

    // A reader that leaves after the first chunk stops the read; the store goes on serving.
    for await (const bytes of h.campaigns.reportJson(lo, hi, look)) {
      expect(bytes.length).toBeGreaterThan(0);
      break;
    }
    expect(await h.campaigns.reportRange(campaignMessageRange(707, 7, 9).lo, campaignMessageRange(707, 7, 9).hi)).toHaveLength(2);
  }, 120_000);

  it('refuses calls once closed, and closes only once', async () => {
    dataDir = tempDir();
    const h = await createChdbHistory({ dataDir });
    await Promise.all([h.close(), h.close()]);
    await expect(h.ping()).rejects.toMatchObject({ code: 'unavailable' });
  });
});
