import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bounceSecretFile } from './bounce-secret-file';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const freshDir = (): string => path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-bounce-secret-')), 'data dir — kāinga');

describe('the bounce secret kept in the data directory', () => {
  it('is made once, owner-only, and the same secret is read at every later start', () => {
    const dir = freshDir();
    const made = bounceSecretFile(dir);
    expect(made).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fs.statSync(path.join(dir, 'bounce-secret')).mode & 0o777).toBe(0o600);
    expect(bounceSecretFile(dir)).toBe(made);
    expect(fs.readdirSync(dir)).toEqual(['bounce-secret']);
    expect(bounceSecretFile(freshDir())).not.toBe(made);
  });

  it('is one secret for e-mail workers that start at the same moment on one data directory', async () => {
    const dir = freshDir();
    const run = promisify(execFile);
    const script = `import { bounceSecretFile } from ${JSON.stringify(path.join(ROOT, 'workers/carriers/smtp/bounce-secret-file.ts'))}; process.stdout.write(bounceSecretFile(${JSON.stringify(dir)}));`;
    const tsx = path.join(ROOT, 'node_modules/.bin/tsx');
    const secrets = await Promise.all(Array.from({ length: 4 }, () => run(tsx, ['--eval', script]).then((r) => r.stdout)));
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]).toBe(bounceSecretFile(dir));
  });

  it('refuses to sign with an empty file, saying what to do', () => {
    const dir = freshDir();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'bounce-secret'), '\n');
    expect(() => bounceSecretFile(dir)).toThrow(/bounce-secret is empty: remove it, or set HERMOD_BOUNCE_SECRET/);
  });
});
