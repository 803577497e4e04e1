import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRbmAccessTokens } from '../workers/carriers/rcs/rbm-access-tokens';
import { readServiceAccountKey } from '../workers/carriers/rcs/rbm-service-account';

const ROOT = path.resolve(import.meta.dirname, '..');
const running: ChildProcess[] = [];
afterEach(() => {
  for (const c of running.splice(0)) c.kill('SIGKILL');
});

/** `hermod channel-simulators` on its own, as README's "At scale" runs it; resolves with its log lines once they listen. */
async function startSimulators(dataDir: string): Promise<{ lines: Record<string, any>[]; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/hermod.js'), 'channel-simulators'], {
    cwd: ROOT,
    env: {
      ...process.env,
      HERMOD_DATA_DIR: dataDir,
      HERMOD_METRICS_PORT: '0',
      HERMOD_SMTP_SINK_PORT: '0',
      HERMOD_WAB_SIMULATOR_PORT: '0',
      HERMOD_RCS_SIMULATOR_PORT: '0',
      HERMOD_MMS_SIMULATOR_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const lines = await new Promise<Record<string, any>[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the simulators did not listen within 60 s:\n${output}`)), 60_000);
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
      if (!output.includes('"msg":"channel simulators listening"')) return;
      clearTimeout(timer);
      resolve(output.split('\n').flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, any>] : [])));
    });
    child.once('exit', (code) => reject(new Error(`the simulators exited (${code}):\n${output}`)));
  });
  return {
    lines,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

describe('the channel simulators run on their own', () => {
  it('keep an RBM service-account key in the data directory, say where, and issue tokens for it, the same key at the next start', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-simulators-alone-'));
    const first = await startSimulators(dataDir);
    const said = first.lines.find((l) => l.msg === 'the RBM simulator takes tokens for this key: give it to the RCS workers');
    const file = said?.HERMOD_RCS_SERVICE_ACCOUNT as string;
    expect(file).toBe(path.join(dataDir, 'rbm-simulator-service-account.json'));
    expect(first.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).not.toContain(
      'the RBM simulator has no service-account key: RCS sends will be refused',
    );
    const ports = first.lines.find((l) => l.msg === 'channel simulators listening') as { rcs: number };
    const key = readServiceAccountKey(file);
    expect(key.tokenUri).toBe(`http://127.0.0.1:${ports.rcs}/token`);
    // What an RCS worker given the file does first: an RS256 assertion for a bearer token.
    expect(await createRbmAccessTokens(key).token()).toMatch(/^\S{16,}$/);
    await first.stop();

    const second = await startSimulators(dataDir);
    const again = readServiceAccountKey(file);
    expect(again.privateKey).toBe(key.privateKey);
    expect(await createRbmAccessTokens(again).token()).toMatch(/^\S{16,}$/);
    await second.stop();
  });
});
