import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config';
import { ensureDataDir } from './data-dir';

const scratch = () => fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-data-dir-'));
const modeOf = (dir: string) => fs.statSync(dir).mode & 0o777;

describe('ensureDataDir', () => {
  it('makes a new data directory that only its owner can read: it holds message text and callback passwords', () => {
    const dir = path.join(scratch(), 'nested', 'hermod-dātā');
    ensureDataDir(dir);
    expect(modeOf(dir)).toBe(0o700);
  });

  it('takes every other user’s access away from an existing data directory, and keeps its group’s', () => {
    const dir = scratch();
    fs.chmodSync(dir, 0o755);
    ensureDataDir(dir);
    expect(modeOf(dir)).toBe(0o750);
    // A directory whose files take its group (setgid, for a backup group) keeps doing so.
    fs.chmodSync(dir, 0o2775);
    ensureDataDir(dir);
    expect(fs.statSync(dir).mode & 0o7777).toBe(0o2770);
  });

  it('refuses a data directory that is a file, naming HERMOD_DATA_DIR', () => {
    const file = path.join(scratch(), 'not-a-dir');
    fs.writeFileSync(file, '');
    expect(() => ensureDataDir(file)).toThrow(ConfigError);
    expect(() => ensureDataDir(file)).toThrow(/HERMOD_DATA_DIR: cannot use .*: a file is there/);
  });
});
