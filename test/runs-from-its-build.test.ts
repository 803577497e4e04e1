import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { currentBuild, sourceStamp } from '../bin/build.js';
import { eventually } from './support/eventually';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { createClient } from './support/https-client';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The pids whose parent is `pid`. */
const childrenOf = (pid: number): number[] =>
  fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // The parent pid is the second field after the command, which is in parentheses and may hold spaces.
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);

const commandLine = (pid: number): string[] => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

describe('hermod runs from a build of its sources', () => {
  let hermod: HermodProcess | undefined;
  const temporary: string[] = [];
  afterAll(async () => {
    if (hermod) await hermod.stop();
    for (const dir of temporary) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts every role of `hermod start` from the bundle of the sources as they are now, and a message goes through', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-build-'));
    temporary.push(dataDir);
    hermod = await startHermod({ dataDir });
    const entry = path.join(ROOT, 'dist', sourceStamp(), 'hermod.js');
    const roles = childrenOf(hermod.pid).map(commandLine);
    // core, the SMSC simulator and the gateway at least; each starts from the build, not through tsx.
    expect(roles.length).toBeGreaterThanOrEqual(3);
    for (const argv of roles) expect(argv).toContain(entry);

    const client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+64211234567', content: 'Kia ora, e hoa mā 👋🏽 你好' });
    expect(sent.status).toBe(202);
    const read = await eventually(async () => {
      const r = await client.get(`/rest/sms/v2/messages?id=${sent.json.id}`);
      return r.json?.status === 'received' ? r.json : undefined;
    }, 30_000);
    expect(read.content).toBe('Kia ora, e hoa mā 👋🏽 你好');
    client.close();
  }, 120_000);

  it("starts every role with glibc malloc settings that give chDB's freed memory back", () => {
    expect(hermod).toBeDefined();
    for (const pid of childrenOf(hermod!.pid)) {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      expect(env).toEqual(expect.arrayContaining(['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=131072', 'MALLOC_TRIM_THRESHOLD_=131072']));
    }
  });

  it('gives core a young generation of its own size (32 MB semi-spaces) and every other role the common one (8 MB)', () => {
    expect(hermod).toBeDefined();
    const semiSpaces = new Map<string, string[]>();
    for (const pid of childrenOf(hermod!.pid)) {
      const role = fs
        .readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((v) => v.startsWith('HERMOD_ROLE='));
      semiSpaces.set(
        role ?? `pid ${pid}`,
        commandLine(pid).filter((a) => a.startsWith('--max-semi-space-size=')),
      );
    }
    expect(semiSpaces.get('HERMOD_ROLE=core')).toEqual(['--max-semi-space-size=32']);
    expect(semiSpaces.get('HERMOD_ROLE=gateway')).toEqual(['--max-semi-space-size=8']);
  });

  /** A copy of the sources, so the repository's own build is left alone. */
  const copyOfSources = (): string => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-sources-'));
    temporary.push(root);
    for (const dir of ['bin', 'lib', 'core', 'gateway', 'workers', 'proto']) fs.cpSync(path.join(ROOT, dir), path.join(root, dir), { recursive: true });
    for (const file of ['package.json', 'package-lock.json', 'tsconfig.json']) fs.copyFileSync(path.join(ROOT, file), path.join(root, file));
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
    return root;
  };

  it('makes the build again when a source changes, not when only a test does, and the new build runs without tsx', async () => {
    const root = copyOfSources();

    const first = await currentBuild(root);
    expect(await currentBuild(root)).toBe(first);
    fs.writeFileSync(path.join(root, 'lib', 'duration.test.ts'), '// a test changed: no new build\n', { flag: 'a' });
    expect(await currentBuild(root)).toBe(first);

    fs.appendFileSync(path.join(root, 'lib', 'duration.ts'), '\n// Tēnā koe 👋🏽\n');
    const second = await currentBuild(root);
    expect(second).not.toBe(first);
    expect(fs.readdirSync(path.join(root, 'dist')).sort()).toEqual([path.basename(first), path.basename(second)].sort());
    // The builder's service process (about 70 MB) is not left running beside the service once the build is made.
    // Its exit is asynchronous: give it a few seconds, then the assertion is the same.
    const builders = (): number[] =>
      childrenOf(process.pid).filter((pid) => {
        try {
          return commandLine(pid).some((arg) => arg.includes('esbuild'));
        } catch {
          return false; // gone between the listing and the read
        }
      });
    await eventually(() => builders().length === 0, 5000).catch(() => undefined);
    expect(builders()).toEqual([]);

    // The bundle runs on plain node: it prints hermod's usage.
    const usage = spawnSync(process.execPath, [path.join(second, 'hermod.js')], { cwd: root, encoding: 'utf8' });
    expect(usage.status).toBe(0);
    expect(usage.stdout).toContain('usage: hermod <command>');
    for (const entry of ['channel-pools-thread-main.js', 'callback-delivery-thread-main.js']) expect(fs.existsSync(path.join(second, entry))).toBe(true);
  }, 60_000);

  it('runs the sources through tsx when asked to, or with a warning when no build can be made', () => {
    const root = copyOfSources();
    const asked = spawnSync(process.execPath, [path.join(root, 'bin/hermod.js')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, HERMOD_BUILD: 'false' },
    });
    expect(asked.status).toBe(0);
    expect(asked.stdout).toContain('usage: hermod <command>');
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false);

    // A file where the builds would go: no build can be made there.
    fs.writeFileSync(path.join(root, 'dist'), 'not a directory');
    const fallback = spawnSync(process.execPath, [path.join(root, 'bin/hermod.js')], { cwd: root, encoding: 'utf8' });
    expect(fallback.status).toBe(0);
    expect(fallback.stdout).toContain('usage: hermod <command>');
    expect(JSON.parse(fallback.stderr.trim().split('\n')[0]!)).toMatchObject({ level: 'warn', msg: 'could not build hermod; running its sources through tsx' });
  }, 60_000);
});
