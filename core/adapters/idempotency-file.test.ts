import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryState } from './memory-state';
import { openIdempotencyFile } from './idempotency-file';

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const freshFile = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-idempotency-'));
  dirs.push(dir);
  return path.join(dir, 'state', 'idempotency-keys.jsonl');
};

const answer = JSON.stringify({ status: 202, body: { id: 'c0809fe2', status: 'accepted', detail: '+6421000110' } });

describe('answers of Idempotency-Keys kept by the in-process hot state', () => {
  it('gives a retry after a restart the first answer, and frees the key once it expires', async () => {
    const file = freshFile();
    let t = 1_000_000;
    const first = createMemoryState({ idempotencyFile: file, now: () => t });
    expect(await first.claimIdempotencyKey('acme\norder-4711', 'fp', 'claim-1', 60_000)).toBeUndefined();
    await first.completeIdempotencyKey('acme\norder-4711', 'claim-1', { fingerprint: 'fp', response: answer }, 60_000);
    // A claim still being handled when hermod stopped is not an answer: that key is free after the restart.
    expect(await first.claimIdempotencyKey('acme\nin-flight', 'fp', 'claim-1', 60_000)).toBeUndefined();
    await first.close();

    const again = createMemoryState({ idempotencyFile: file, now: () => t });
    expect(await again.claimIdempotencyKey('acme\norder-4711', 'fp', 'claim-1', 60_000)).toEqual({ fingerprint: 'fp', response: answer });
    expect(await again.claimIdempotencyKey('acme\nin-flight', 'fp', 'claim-1', 60_000)).toBeUndefined();
    await again.close();

    t += 60_001;
    const later = createMemoryState({ idempotencyFile: file, now: () => t });
    expect(await later.claimIdempotencyKey('acme\norder-4711', 'fp', 'claim-1', 60_000)).toBeUndefined();
    await later.close();
  });

  it('drops a line torn by a crash in the middle of an append, and keeps the whole ones before it', async () => {
    const file = freshFile();
    const state = createMemoryState({ idempotencyFile: file });
    await state.completeIdempotencyKey('acme\nmā-1', 'claim-1', { fingerprint: 'fp', response: answer }, 60_000);
    await state.close();
    fs.appendFileSync(file, '{"k":"acme\\nmā-2","f":"fp","r":"{\\"status\\":2');
    const after = createMemoryState({ idempotencyFile: file });
    expect(await after.claimIdempotencyKey('acme\nmā-1', 'fp', 'claim-1', 60_000)).toEqual({ fingerprint: 'fp', response: answer });
    expect(await after.claimIdempotencyKey('acme\nmā-2', 'fp', 'claim-1', 60_000)).toBeUndefined();
    await after.close();
    // The rewrite at start left no torn line for later appends to join.
    expect(fs.readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
  });

  it('rewrites the file without expired answers once they are most of it', async () => {
    const file = freshFile();
    let t = 0;
    const state = createMemoryState({ idempotencyFile: file, now: () => t });
    for (let i = 0; i < 2500; i++) {
      t += 10;
      await state.claimIdempotencyKey(`k${i}`, 'fp', 'claim-1', 1000);
      await state.completeIdempotencyKey(`k${i}`, 'claim-1', { fingerprint: 'fp', response: answer }, 1000);
    }
    await state.close();
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
    expect(lines).toBeLessThan(1200);
    const { kept, file: reopened } = openIdempotencyFile(file, t, false);
    reopened.close();
    expect(kept.map((k) => k.key)).toEqual(Array.from({ length: 100 }, (_, i) => `k${2400 + i}`));
  });

  it('leaves no torn line after an append the disk refused halfway, so the next answer is still kept', () => {
    const file = freshFile();
    const { file: f } = openIdempotencyFile(file, 0, false);
    const kept = (key: string) => ({ key, record: { fingerprint: 'fp', response: answer }, expires: 1e15 });
    f.keep(kept('mā-1'));
    const write = fs.writeSync;
    vi.spyOn(fs, 'writeSync').mockImplementationOnce(((fd: number, buf: NodeJS.ArrayBufferView, offset: number) => {
      write(fd, buf, offset, 10);
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    }) as unknown as typeof fs.writeSync);
    expect(() => f.keep(kept('mā-2'))).toThrow(/ENOSPC/);
    f.keep(kept('mā-3'));
    f.close();
    const { kept: after, file: again } = openIdempotencyFile(file, 0, false);
    again.close();
    expect(after.map((a) => a.key)).toEqual(['mā-1', 'mā-3']);
  });

  it('keeps appending to the file it had when a rewrite fails, and closes no descriptor it does not own', () => {
    const file = freshFile();
    const { file: f } = openIdempotencyFile(file, 0, false);
    const kept = (key: string) => ({ key, record: { fingerprint: 'fp', response: answer }, expires: 1e15 });
    f.keep(kept('k1'));
    const open = fs.openSync;
    vi.spyOn(fs, 'openSync').mockImplementation(((p: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
      if (flags === 'a') throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
      return open(p, flags ?? 'r', mode);
    }) as typeof fs.openSync);
    expect(() => f.rewrite([kept('k1')])).toThrow(/EMFILE/);
    vi.restoreAllMocks();
    const other = path.join(path.dirname(file), 'another-component.log');
    const otherFd = fs.openSync(other, 'a');
    f.keep(kept('k2'));
    f.close();
    fs.writeSync(otherFd, 'still mine');
    fs.closeSync(otherFd);
    expect(fs.readFileSync(other, 'utf8')).toBe('still mine');
    const { kept: after, file: again } = openIdempotencyFile(file, 0, false);
    again.close();
    expect(after.map((a) => a.key)).toEqual(['k1', 'k2']);
  });

  it('answers a client whose answer the disk would not take: kept in memory, the failure told', async () => {
    const file = freshFile();
    const told: unknown[] = [];
    const state = createMemoryState({ idempotencyFile: file, onFileError: (err) => told.push(err) });
    vi.spyOn(fs, 'writeSync').mockImplementation(() => {
      throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
    });
    await state.completeIdempotencyKey('acme\nkey', 'claim-1', { fingerprint: 'fp', response: answer }, 60_000);
    vi.restoreAllMocks();
    expect(told).toHaveLength(1);
    expect(await state.claimIdempotencyKey('acme\nkey', 'fp', 'claim-1', 60_000)).toEqual({ fingerprint: 'fp', response: answer });
    await state.close();
  });

  it('reads back every answer as it was kept, whatever its text', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            key: fc.string({ unit: 'grapheme', minLength: 1 }),
            response: fc.string({ unit: 'grapheme' }),
            fingerprint: fc.stringMatching(/^[0-9a-f]{0,64}$/),
          }),
          {
            maxLength: 20,
          },
        ),
        (answers) => {
          const file = freshFile();
          const { file: f } = openIdempotencyFile(file, 0, false);
          for (const a of answers) f.keep({ key: a.key, record: { fingerprint: a.fingerprint, response: a.response }, expires: 10 });
          f.close();
          const { kept, file: again } = openIdempotencyFile(file, 0, false);
          again.close();
          expect(kept).toEqual(answers.map((a) => ({ key: a.key, record: { fingerprint: a.fingerprint, response: a.response }, expires: 10 })));
        },
      ),
      { numRuns: 50 },
    );
  });
});
