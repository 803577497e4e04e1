import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';

const ROOT = path.resolve(import.meta.dirname, '..');

const answers = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describe('a bench stopped by a signal', () => {
  it('takes the hermod it started down with it, so no service is left running after Ctrl-C or timeout', async () => {
    const bench = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/support/bench-like-main.ts')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    bench.stdout.on('data', (d: Buffer) => (output += d.toString()));
    bench.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => bench.once('exit', resolve));
    const port = Number(await eventually(() => /running (\d+)/.exec(output)?.[1], 60_000, 100));
    expect(await answers(port)).toBe(true);

    bench.kill('SIGTERM');
    expect(await exited).toBe(143);
    await eventually(async () => ((await answers(port)) ? undefined : true), 10_000, 100);
  }, 90_000);
});
