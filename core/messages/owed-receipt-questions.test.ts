import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../lib/log';
import { openOwedReceiptQuestions } from './owed-receipt-questions';

/** A logger that keeps what it was told at error level. */
function keptErrors(): { log: Logger; errors: string[] } {
  const errors: string[] = [];
  const log: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (msg) => void errors.push(msg), child: () => log };
  return { log, errors };
}

describe('the questions about receipts owed to the carriers', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const fileIn = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-owed-questions-'));
    dirs.push(dir);
    return path.join(dir, 'state', 'receipt-questions-owed.json');
  };

  it('owes nothing in a new data directory', () => {
    expect(openOwedReceiptQuestions(fileIn(), true, keptErrors().log).before).toBeUndefined();
  });

  it('are still owed after a crash, by the next open of the same file', () => {
    const file = fileIn();
    openOwedReceiptQuestions(file, true, keptErrors().log).owe(1_700_000_000_000);
    expect(openOwedReceiptQuestions(file, true, keptErrors().log).before).toBe(1_700_000_000_000);
  });

  it('are owed no more once every message accepted before the loss was asked about', () => {
    const file = fileIn();
    const owed = openOwedReceiptQuestions(file, true, keptErrors().log);
    owed.owe(1_700_000_000_000);
    owed.paid(1_700_000_000_000);
    expect(owed.before).toBeUndefined();
    expect(openOwedReceiptQuestions(file, true, keptErrors().log).before).toBeUndefined();
    expect(fs.readdirSync(path.dirname(file))).toEqual([]);
  });

  it('stay owed when a later loss owes more than the asking that finished covered', () => {
    const file = fileIn();
    const owed = openOwedReceiptQuestions(file, false, keptErrors().log);
    owed.owe(1_700_000_000_000);
    // A second loss while the first's questions were being asked.
    owed.owe(1_700_000_060_000);
    owed.paid(1_700_000_000_000);
    expect(owed.before).toBe(1_700_000_060_000);
    expect(openOwedReceiptQuestions(file, false, keptErrors().log).before).toBe(1_700_000_060_000);
  });

  it('never owe less because an earlier moment is owed again', () => {
    const owed = openOwedReceiptQuestions(fileIn(), false, keptErrors().log);
    owed.owe(1_700_000_060_000);
    owed.owe(1_700_000_000_000);
    expect(owed.before).toBe(1_700_000_060_000);
  });

  it('still owe every message waiting for a receipt when the file was changed by hand into something else', () => {
    const file = fileIn();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'Kia ora 👋🏽');
    const before = Date.now();
    expect(openOwedReceiptQuestions(file, false, keptErrors().log).before).toBeGreaterThanOrEqual(before);
  });

  it('stay owed in memory, and say so, when the disk refuses the note (a live loss must not crash core)', () => {
    const file = fileIn();
    const { log, errors } = keptErrors();
    const owed = openOwedReceiptQuestions(file, true, log);
    // What stands in for a full or failing disk: the temporary file cannot be created.
    fs.mkdirSync(`${file}.tmp`, { recursive: true });
    expect(() => owed.owe(1_700_000_000_000)).not.toThrow();
    expect(owed.before).toBe(1_700_000_000_000);
    expect(errors).toEqual([expect.stringContaining('could not note in the data directory')]);
    expect(() => owed.paid(1_700_000_000_000)).not.toThrow();
    expect(owed.before).toBeUndefined();
  });

  it('still owe every message waiting for a receipt when the note cannot be read', () => {
    const file = fileIn();
    // A directory where the note should be: it cannot be read as one.
    fs.mkdirSync(file, { recursive: true });
    const before = Date.now();
    const { log, errors } = keptErrors();
    expect(openOwedReceiptQuestions(file, false, log).before).toBeGreaterThanOrEqual(before);
    expect(errors).toHaveLength(1);
  });
});
