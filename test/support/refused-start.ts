import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface RefusedStart {
  /** The exit code; null when it was still running after `waitMs` (then it was killed). */
  code: number | null;
  output: string;
  /** The log lines at level error. */
  errors: Record<string, any>[];
  /** What `atExit` found the moment hermod's own process exited (before its output closed). */
  atExit?: unknown;
}

/**
 * Runs `hermod <args>` expecting it to refuse to start: resolves with how it
 * exited and what it said, or stops it once it says its metrics are listening
 * (a role run alone is started then) or hermod is running, or kills it after `waitMs`
 * (a whole `hermod start` took 24 s to reach its gateway on a machine at load 8).
 */
export function runRefusedStart(args: string[], env: Record<string, string>, waitMs = 60_000, atExit?: () => Promise<unknown>): Promise<RefusedStart> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/hermod.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (c: string) => {
    output += c;
    if (output.includes('"msg":"metrics listening"') || output.includes('"msg":"hermod is running"')) child.kill('SIGTERM');
  });
  child.stderr.on('data', (c: string) => (output += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), waitMs);
  // Looked at as the process exits: its output closes only once every process holding it (its children) is gone too.
  const found = new Promise<unknown>((resolve) => child.once('exit', () => resolve(atExit?.())));
  return new Promise((resolve) =>
    child.once('close', async (code) => {
      clearTimeout(timer);
      const errors = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>)
        .filter((line) => line.level === 'error');
      resolve({ code, output, errors, atExit: await found });
    }),
  );
}
