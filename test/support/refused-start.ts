import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface RefusedStart {
  /** The exit code; null when it was still running after `waitMs` (then it was killed). */
  code: number | null;
  output: string;
  /** The log lines at level error. */
  errors: Record<string, any>[];
}

/**
 * Runs `hermod <args>` expecting it to refuse to start: resolves with how it
 * exited and what it said, or stops it once it says its metrics are listening
 * (a role run alone is started then) or hermod is running, or kills it after `waitMs`.
 */
export function runRefusedStart(args: string[], env: Record<string, string>, waitMs = 30_000): Promise<RefusedStart> {
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
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      const errors = output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>)
        .filter((line) => line.level === 'error');
      resolve({ code, output, errors });
    }),
  );
}
