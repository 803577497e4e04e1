import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createChdbHistory } from '../adapters/chdb-history';
import { event, message } from '../adapters/history-contract';
import type { History } from '../ports/history';
import { createLogger } from '../../lib/log';
import { createJournaledHistory } from './journaled-history';

const log = createLogger({ test: 'journaled-history' });

describe('journaled history', () => {
  const open: History[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close().catch(() => undefined);
  });

  const setup = async (dataDir: string, flushIntervalMs: number) => {
    const inner = await createChdbHistory({ dataDir });
    const journaled = await createJournaledHistory({ inner, dir: path.join(dataDir, 'journal'), log, flushIntervalMs });
    return { inner, journaled };
  };

  it('acknowledges a write once journaled, before the engine has it, and finds it by id at once all the same', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-'));
    const { inner, journaled } = await setup(dataDir, 60_000);
    open.push(journaled);
    const m = message();
    await journaled.insertMessages([m], [event(m, 'accepted', m.acceptedAt)]);
    // The flush is a minute away: the engine does not have it yet.
    expect(await inner.getMessage(m.applicationId, m.id)).toBeUndefined();
    // A lookup that would miss while rows wait flushes them and looks again (a reply to a message
    // sent a moment ago, an IM attempt, a carrier id from a fast receipt).
    expect(await journaled.getMessage(m.applicationId, m.id)).toMatchObject({ id: m.id, status: 'accepted' });
    const n = message();
    await journaled.insertMessages([n], [{ ...event(n, 'submitted', n.acceptedAt + 5), carrierId: 'carrier-Ā-1' }]);
    expect(await journaled.findMessage(n.id)).toMatchObject({ id: n.id });
    const q = message();
    await journaled.insertMessages([q], [event(q, 'accepted', q.acceptedAt)]);
    expect((await journaled.findMessages([q.id, n.id])).map((r) => r.id).sort()).toEqual([q.id, n.id].sort());
    const o = message();
    await journaled.insertMessages([o], [{ ...event(o, 'submitted', o.acceptedAt + 5), carrierId: 'carrier-Ā-2' }]);
    expect(await journaled.findMessageIdsByCarrierIds(['carrier-Ā-2'])).toEqual(new Map([['carrier-Ā-2', o.id]]));
    const p = message();
    await journaled.insertMessages([p], [event(p, 'accepted', p.acceptedAt)]);
    expect(await journaled.getMessageByNumericId(p.applicationId, p.numericId)).toMatchObject({ id: p.id });
    // Nothing waiting: an unknown id is simply not found.
    expect(await journaled.findMessage('00000000-0000-4000-8000-000000000000')).toBeUndefined();
  });

  it('finds by a carrier id given again the message that got it last, while that submit still waits for the flush', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-'));
    const { journaled } = await setup(dataDir, 60_000);
    open.push(journaled);
    const older = message();
    await journaled.insertMessages([older], [{ ...event(older, 'submitted', older.acceptedAt + 5), carrierId: 'smsc-1' }]);
    await journaled.flush();
    // The SMSC restarted and counts its ids from 1 again: the newer message's submit is still in the journal.
    const newer = message();
    await journaled.insertMessages([newer], [{ ...event(newer, 'submitted', older.acceptedAt + 50), carrierId: 'smsc-1' }]);
    expect(await journaled.findMessageIdsByCarrierIds(['smsc-1'])).toEqual(new Map([['smsc-1', newer.id]]));
  });

  it('reads the latest status of a message by id, numeric id or route while its newest events wait for the flush', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-'));
    const { journaled } = await setup(dataDir, 60_000);
    open.push(journaled);
    const m = message({ content: 'Kia ora — tēnā koe 👋🏽' });
    await journaled.insertMessages([m], [event(m, 'accepted', m.acceptedAt)]);
    await journaled.flush();
    // The engine has the message as accepted; what happened since waits in the journal (an e-mail delivered, then bounced).
    await journaled.appendEvents([{ ...event(m, 'submitted', m.acceptedAt + 5), detail: 'route nz → carrier smtp' }, event(m, 'received', m.acceptedAt + 9)]);
    expect(await journaled.findMessage(m.id)).toMatchObject({ id: m.id, status: 'received', statusAt: m.acceptedAt + 9 });
    await journaled.appendEvents([{ ...event(m, 'submitted', m.acceptedAt + 12), detail: 'route nz → carrier ses (failover from smtp)' }]);
    expect((await journaled.getMessageRoute(m.applicationId, m.id))?.route).toBe('route nz → carrier ses (failover from smtp)');
    await journaled.appendEvents([event(m, 'failed', m.acceptedAt + 20)]);
    expect(await journaled.getMessage(m.applicationId, m.id)).toMatchObject({ status: 'failed', statusAt: m.acceptedAt + 20 });
    await journaled.appendEvents([event(m, 'failed', m.acceptedAt + 30)]);
    expect(await journaled.getMessageByNumericId(m.applicationId, m.numericId)).toMatchObject({ status: 'failed', statusAt: m.acceptedAt + 30 });
  });

  it('hands the engine each flush whole and nothing more, when a flush is smaller than the one before it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-'));
    const { inner, journaled } = await setup(dataDir, 60_000);
    open.push(journaled);
    // Flushes of some hundreds of kilobytes each, the larger first: the second is written where the first was.
    const texts = ['Kia ora, tēnā koe — ', '你好，明天见 ', '👋🏽🎉 '];
    const flushOf = (count: number, from: number) =>
      Array.from({ length: count }, (_, i) => message({ content: `${texts[(from + i) % 3]!.repeat(8)}${from + i}` }));
    const first = flushOf(1500, 0);
    const second = flushOf(600, 1500);
    for (const batch of [first, second]) {
      await journaled.insertMessages(
        batch,
        batch.map((m) => event(m, 'accepted', m.acceptedAt)),
      );
      await journaled.flush();
    }
    const read = await inner.findMessages([...first, ...second].map((m) => m.id));
    expect(read).toHaveLength(2100);
    const byId = new Map(read.map((r) => [r.id, r]));
    for (const m of [...first, ...second]) expect(byId.get(m.id)?.content).toBe(m.content);
  });

  it('replays writes that were journaled but never flushed when the process died', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-'));
    const first = await setup(dataDir, 60_000);
    const m = message();
    await first.journaled.insertMessages([m], [event(m, 'accepted', m.acceptedAt)]);
    await first.journaled.appendEvents([event(m, 'queued', m.acceptedAt + 1)]);
    // The process dies: the engine goes away without the journal being flushed.
    await first.inner.close();

    const second = await setup(dataDir, 60_000);
    open.push(second.journaled);
    expect(await second.journaled.getMessage(m.applicationId, m.id)).toMatchObject({ id: m.id, status: 'queued' });
    // Replayed rows are not replayed a second time.
    await second.journaled.close();
    open.pop();
    const third = await setup(dataDir, 60_000);
    open.push(third.journaled);
    const unfinished = await third.journaled.listUnfinished(10);
    expect(unfinished.map((u) => u.id)).toEqual([m.id]);
  });

  it('flushes before listing unfinished messages, so recovery sees every acknowledged write', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-'));
    const { journaled } = await setup(dataDir, 60_000);
    open.push(journaled);
    const m = message({ acceptedAt: Date.now() });
    await journaled.insertMessages([m], [event(m, 'accepted', m.acceptedAt)]);
    expect((await journaled.listUnfinished(10)).map((u) => u.id)).toEqual([m.id]);
  });
  it('replays a journal written by an earlier version, and leaves out a torn last line', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-journal-'));
    const dir = path.join(dataDir, 'journal');
    fs.mkdirSync(dir, { recursive: true });
    const old = message();
    const torn = message();
    fs.writeFileSync(
      path.join(dir, 'journal-0000000001.ndjson'),
      JSON.stringify({ e: event(old, 'accepted', old.acceptedAt) }) +
        '\n' +
        JSON.stringify({ m: old }) +
        '\n' +
        'M' +
        JSON.stringify({ id: torn.id }).slice(0, 10),
    );
    const { journaled } = await setup(dataDir, 60_000);
    open.push(journaled);
    expect(await journaled.getMessage(old.applicationId, old.id)).toMatchObject({ id: old.id, status: 'accepted', content: old.content });
    expect(await journaled.getMessage(torn.applicationId, torn.id)).toBeUndefined();
  });
});
