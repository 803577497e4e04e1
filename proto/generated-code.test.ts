import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..');

function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe('generated gRPC code', () => {
  it('matches what `npm run proto` generates from the .proto files', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-proto-'));
    execFileSync(path.join(root, 'node_modules/.bin/buf'), ['generate', '-o', out], { cwd: root, stdio: 'pipe' });
    const fresh = path.join(out, 'proto/gen');
    const committed = path.join(root, 'proto/gen');
    expect(listFiles(committed)).toEqual(listFiles(fresh));
    for (const file of listFiles(fresh)) {
      expect(fs.readFileSync(path.join(committed, file), 'utf8'), `${file} is stale: run npm run proto`).toBe(fs.readFileSync(path.join(fresh, file), 'utf8'));
    }
    fs.rmSync(out, { recursive: true, force: true });
  });
});
