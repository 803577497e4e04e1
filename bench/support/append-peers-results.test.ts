import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendPeersResults } from './append-peers-results';

const HEADING = '## Peers: Kannel and hermod in one run';

describe('peers results in RESULTS.md', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-peers-results-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };

  it('creates the section at the end of the file on the first run and leaves what was there untouched', () => {
    const before = '# Benchmark results\n\n## Send acceptance\n\nKia ora, e hoa mā 👋🏽\n';
    const f = file('first.md', before);
    appendPeersResults(f, '### 2026-11-24 08:00 UTC\n\nfirst run');
    const text = fs.readFileSync(f, 'utf8');
    expect(text.startsWith(before)).toBe(true);
    expect(text.indexOf(HEADING)).toBeGreaterThan(before.length - 1);
    expect(text.endsWith('### 2026-11-24 08:00 UTC\n\nfirst run\n')).toBe(true);
  });

  it('appends each later run as a subsection below the earlier ones, once heading and all', () => {
    const f = file('later.md', '# Benchmark results\n');
    appendPeersResults(f, '### run 1\n\none');
    appendPeersResults(f, '### run 2\n\ntwo');
    const text = fs.readFileSync(f, 'utf8');
    expect(text.split(HEADING)).toHaveLength(2);
    expect(text.indexOf('### run 1')).toBeLessThan(text.indexOf('### run 2'));
    expect(text.endsWith('### run 2\n\ntwo\n')).toBe(true);
  });

  it('puts a run at the end of its own section when other sections follow it, not at the end of the file', () => {
    const f = file('between.md', `# Benchmark results\n\n${HEADING}\n\n### run 1\n\none\n\n## 東京 campaign\n\nlater section\n`);
    appendPeersResults(f, '### run 2\n\ntwo');
    expect(fs.readFileSync(f, 'utf8')).toBe(`# Benchmark results\n\n${HEADING}\n\n### run 1\n\none\n\n### run 2\n\ntwo\n\n## 東京 campaign\n\nlater section\n`);
  });
});
