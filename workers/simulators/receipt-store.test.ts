import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ReceiptStore, replayReceiptLog, type OwedReceipt } from './receipt-store';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-receipt-store-'));
  dirs.push(dir);
  return path.join(dir, 'smsc-simulator', 'owed-receipts.log');
}

function receipt(id: string, text: string, systemId = 'hermod'): OwedReceipt {
  return {
    systemId,
    carrierMessageId: id,
    state: 'delivered',
    errorCode: 0,
    submitDate: 1,
    dueAt: 2,
    sourceAddr: 'Hermod',
    sourceTon: 5,
    sourceNpi: 0,
    destinationAddr: '64211234567',
    destTon: 1,
    destNpi: 1,
    text,
  };
}

const WORLD_TEXTS = ['Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉', 'line\nbreak and \u2028 separator'];

describe('receipt store', () => {
  it('gives back exactly the receipts not acknowledged, texts in any script intact, after it is opened again', () => {
    const file = tempFile();
    const store = ReceiptStore.open(file);
    WORLD_TEXTS.forEach((text, i) => {
      store.owe(receipt(`id${i}`, text));
    });
    store.ack('id1');
    store.ack('id3');
    store.close();
    const again = ReceiptStore.open(file);
    expect([...again.owed.values()]).toEqual([receipt('id0', WORLD_TEXTS[0]!), receipt('id2', WORLD_TEXTS[2]!), receipt('id4', WORLD_TEXTS[4]!)]);
    again.close();
  });

  it('writes the receipt alone, not the session object a receipt order carries along', () => {
    const file = tempFile();
    const store = ReceiptStore.open(file);
    // What the dispatcher hands over: the receipt plus the live session it came in on (sockets, buffers, timers).
    const session = { systemId: 'hermod', socket: { buffered: Buffer.alloc(64 * 1024, 1) }, self: undefined as unknown };
    session.self = session;
    store.owe({ ...receipt('with-session', 'Kia ora'), session } as OwedReceipt);
    store.close();
    const line = fs.readFileSync(file, 'utf8').trim();
    expect(Object.keys(JSON.parse(line).owe).sort()).toEqual(Object.keys(receipt('x', 'y')).sort());
    expect(line.length).toBeLessThan(1000);
    const again = ReceiptStore.open(file);
    expect([...again.owed.values()]).toEqual([receipt('with-session', 'Kia ora')]);
    again.close();
  });

  it('ignores a last line torn by a crash and keeps appending cleanly after it', () => {
    const file = tempFile();
    const store = ReceiptStore.open(file);
    store.owe(receipt('a', 'Kia ora'));
    store.owe(receipt('b', '你好世界'));
    store.close();
    // kill -9 in the middle of writing b's acknowledgement... and of a multi-byte character before it.
    fs.appendFileSync(file, Buffer.from('{"ack":"b"', 'utf8'));
    fs.appendFileSync(file, Buffer.from('{"owe":{"text":"mā', 'utf8').subarray(0, -1));
    const again = ReceiptStore.open(file);
    expect([...again.owed.keys()]).toEqual(['a', 'b']);
    again.ack('a');
    again.close();
    expect([...ReceiptStore.open(file).owed.keys()]).toEqual(['b']);
  });

  it('has a receipt on disk before the next setImmediate, when the simulator answers the submit_sm', async () => {
    const file = tempFile();
    const store = ReceiptStore.open(file);
    store.owe(receipt('a', 'Kia ora, e hoa mā'));
    store.owe(receipt('b', '你好世界'));
    await new Promise((r) => setImmediate(r));
    expect([...replayReceiptLog(fs.readFileSync(file)).keys()]).toEqual(['a', 'b']);
    store.close();
  });

  it('compacts its log once acknowledgements pile up, keeping what is owed', () => {
    const file = tempFile();
    const store = ReceiptStore.open(file, { compactAfter: 50 });
    store.owe(receipt('kept', 'Привет'));
    for (let i = 0; i < 200; i++) {
      store.owe(receipt(`r${i}`, 'tēnā koe'));
      store.ack(`r${i}`);
      store.flush();
    }
    const lines = fs.readFileSync(file, 'utf8').split('\n').length - 1;
    expect(lines).toBeLessThanOrEqual(51);
    store.close();
    expect([...ReceiptStore.open(file).owed.keys()]).toEqual(['kept']);
  });

  it('replays any history cut at any byte to exactly the receipts owed by the lines written whole (property)', () => {
    type Op = { kind: 'owe'; text: string; systemId: string } | { kind: 'ack'; pick: number } | { kind: 'reopen' };
    const op: fc.Arbitrary<Op> = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          kind: fc.constant('owe' as const),
          text: fc.string({ unit: 'binary', maxLength: 40 }),
          systemId: fc.constantFrom('hermod', 'ōtautahi', 'смс'),
        }),
      },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('ack' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 2, max: 20 }), (ops, cutAt, compactAfter) => {
        const file = tempFile();
        let store = ReceiptStore.open(file, { compactAfter });
        // The model after each op, and the file size then: a crash after op k leaves the first `size[k]` bytes.
        const model = new Map<string, OwedReceipt>();
        const states: { size: number; owed: string[] }[] = [];
        let next = 0;
        let inode = -1;
        const snapshot = (): void => {
          const stat = fs.statSync(file);
          // A compaction (on open, or after many acks) replaces the file by rename: a crash cannot tear what came before it.
          if (stat.ino !== inode) states.length = 0;
          inode = stat.ino;
          states.push({ size: stat.size, owed: [...model.keys()] });
        };
        snapshot();
        for (const o of ops) {
          if (o.kind === 'owe') {
            const r = receipt(`m${next++}`, o.text, o.systemId);
            store.owe(r);
            store.flush();
            model.set(r.carrierMessageId, r);
          } else if (o.kind === 'ack') {
            const keys = [...model.keys()];
            if (keys.length === 0) continue;
            const id = keys[o.pick % keys.length]!;
            store.ack(id);
            store.flush();
            model.delete(id);
          } else {
            store.close();
            store = ReceiptStore.open(file, { compactAfter });
          }
          snapshot();
        }
        store.close();
        const bytes = fs.readFileSync(file);
        const first = states[0]!.size;
        const cut = first + Math.floor(cutAt * (bytes.length - first));
        // The state after the last op whose bytes all made it to disk.
        let expected = states[0]!;
        for (const s of states) if (s.size <= cut) expected = s;
        fs.writeFileSync(file, bytes.subarray(0, cut));
        const replayed = ReceiptStore.open(file, { compactAfter });
        expect([...replayed.owed.keys()].sort()).toEqual([...expected.owed].sort());
        for (const id of expected.owed) expect(replayed.owed.get(id)!.text).toBe(receipts(ops).get(id));
        replayed.close();
      }),
      { numRuns: 150 },
    );
  });

  it('keeps texts in any script whole through the log (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 30 }), { maxLength: 20 }), (texts) => {
        const lines = texts.map((t, i) => JSON.stringify({ owe: receipt(`x${i}`, t) }) + '\n').join('');
        const owed = replayReceiptLog(Buffer.from(lines, 'utf8'));
        expect([...owed.values()].map((r) => r.text)).toEqual(texts);
      }),
    );
  });
});

/** carrierMessageId -> text, as the property's ops assign them. */
function receipts(ops: readonly { kind: string; text?: string }[]): Map<string, string> {
  const texts = new Map<string, string>();
  let next = 0;
  for (const o of ops) if (o.kind === 'owe') texts.set(`m${next++}`, o.text!);
  return texts;
}
