import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface RoleProcess {
  pid: number;
  /** The JSON log line that said it was ready: where it listens, with the ports it got for port 0. */
  ready: Record<string, any>;
  output(): string;
  stop(): Promise<number | null>;
  kill9(): Promise<void>;
}

/**
 * Starts `hermod <args>` as its own OS process and resolves once its log has a
 * line containing `readyText` (a JSON log line). Roles bind the ports they are
 * given, port 0 included, and say in that line which they got.
 */
export async function startRole(
  args: string[],
  env: Record<string, string>,
  readyText: string,
  /** Told everything the process has written so far, each time it writes (before it is ready too). */
  onOutput?: (output: string) => void,
): Promise<RoleProcess> {
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'bin/hermod.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Decoded as streams, so a character split between two chunks stays whole (logs carry users' texts).
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  const took = (c: string): void => {
    output += c;
    onOutput?.(output);
  };
  child.stdout!.on('data', took);
  child.stderr!.on('data', took);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await new Promise<Record<string, any>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} did not start in time:\n${output}`)), 60_000);
    const check = (): void => {
      // Whole lines only (the last may still be arriving).
      const line = output
        .split('\n')
        .slice(0, -1)
        .find((l) => l.includes(readyText));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code} while starting:\n${output}`));
    });
  });
  return {
    pid: child.pid!,
    ready,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
