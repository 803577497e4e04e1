import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openOwedReceiptQuestions } from './owed-receipt-questions';

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
    expect(openOwedReceiptQuestions(fileIn(), true).before).toBeUndefined();
  });

  it('are still owed after a crash, by the next open of the same file', () => {
    const file = fileIn();
    openOwedReceiptQuestions(file, true).owe(1_700_000_000_000);
    expect(openOwedReceiptQuestions(file, true).before).toBe(1_700_000_000_000);
  });

  it('are owed no more once every message accepted before the loss was asked about', () => {
    const file = fileIn();
    const owed = openOwedReceiptQuestions(file, true);
    owed.owe(1_700_000_000_000);
    owed.paid(1_700_000_000_000);
    expect(owed.before).toBeUndefined();
    expect(openOwedReceiptQuestions(file, true).before).toBeUndefined();
    expect(fs.readdirSync(path.dirname(file))).toEqual([]);
  });

  it('stay owed when a later loss owes more than the asking that finished covered', () => {
    const file = fileIn();
    const owed = openOwedReceiptQuestions(file, false);
    owed.owe(1_700_000_000_000);
    // A second loss while the first's questions were being asked.
    owed.owe(1_700_000_060_000);
    owed.paid(1_700_000_000_000);
    expect(owed.before).toBe(1_700_000_060_000);
    expect(openOwedReceiptQuestions(file, false).before).toBe(1_700_000_060_000);
  });

  it('never owe less because an earlier moment is owed again', () => {
    const owed = openOwedReceiptQuestions(fileIn(), false);
    owed.owe(1_700_000_060_000);
    owed.owe(1_700_000_000_000);
    expect(owed.before).toBe(1_700_000_060_000);
  });

  it('still owe every message waiting for a receipt when the file was changed by hand into something else', () => {
    const file = fileIn();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, 'Kia ora 👋🏽');
    const before = Date.now();
    expect(openOwedReceiptQuestions(file, false).before).toBeGreaterThanOrEqual(before);
  });
});
