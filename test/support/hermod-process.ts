import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from './eventually';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Process groups of services started here that have not exited. Should this
 * process exit first (a test file that failed before its clean-up, a bench
 * ended by Ctrl-C or `timeout`: see bench/support/exit-on-signal.ts), they
 * are killed on the way out instead of running on, holding their ports and
 * a core's worth of memory.
 */
const runningGroups = new Set<number>();
process.once('exit', () => {
  for (const pgid of runningGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

export interface HermodProcess {
  /** The supervisor's pid (`hermod start`); the roles are its children. */
  pid: number;
  httpsPort: number;
  httpPort: number;
  metricsPort: number;
  baseUrl: string;
  dataDir: string;
  coreAddress: string;
  /**
   * Runs `hermod <args>` against this service (operators' commands); resolves with exit code, what it wrote
   * to standard output and to standard error, and both as they arrived (`output`).
   */
  cli(args: string[], env?: Record<string, string>): Promise<{ code: number | null; output: string; stdout: string; stderr: string }>;
  /** The self-signed certificate the service created, to trust it in clients. */
  ca(): string;
  output(): string;
  /** SIGTERM and wait for a clean exit. */
  stop(): Promise<number | null>;
  /** kill -9 of the supervisor and every process it started. */
  kill9(): Promise<void>;
}

/**
 * Runs `hermod start` as a real process group, exactly as a user would, on
 * port 0 everywhere (HTTPS, HTTP, metrics, core's gRPC; `env` may name fixed
 * ones), and resolves once it says it is running, with the ports it got.
 */
export async function startHermod(options: { dataDir: string; env?: Record<string, string>; nodeArgs?: string[] }): Promise<HermodProcess> {
  const env = {
    ...process.env,
    HERMOD_DATA_DIR: options.dataDir,
    HERMOD_HTTPS_PORT: '0',
    HERMOD_HTTP_PORT: '0',
    HERMOD_METRICS_PORT: '0',
    HERMOD_HOST: '127.0.0.1',
    HERMOD_CORE_ADDRESS: '127.0.0.1:0',
    HERMOD_SMSC_PORT: '0',
    HERMOD_BOOTSTRAP_APP: 'acme',
    HERMOD_BOOTSTRAP_PASSWORD: 'secret',
    HERMOD_LOG_LEVEL: 'info',
    // Tests that need the channel simulators run their own, or ask for them on port 0.
    HERMOD_CHANNEL_SIMULATORS: 'false',
    ...options.env,
  };
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), path.join(ROOT, 'bin/hermod.js'), 'start'], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Decoded as streams, so a character split between two chunks stays whole (logs carry users' texts).
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (c: string) => (output += c));
  child.stderr!.on('data', (c: string) => (output += c));
  runningGroups.add(child.pid!);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      runningGroups.delete(child.pid!);
      resolve(code);
    }),
  );

  const running = await new Promise<RunningLine>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hermod did not start in time:\n${output}`)), 60_000);
    const check = (): void => {
      const line = runningLine(output);
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`hermod exited with ${code} while starting:\n${output}`));
    });
  });
  const portOf = (url: string): number => Number(new URL(url).port);
  const ports = { https: portOf(running.https), http: portOf(running.http), metrics: portOf(running.metrics) };
  const coreAddress = running.core;

  return {
    pid: child.pid!,
    httpsPort: ports.https,
    httpPort: ports.http,
    metricsPort: ports.metrics,
    baseUrl: `https://127.0.0.1:${ports.https}`,
    dataDir: options.dataDir,
    coreAddress,
    cli: (args, env) =>
      new Promise((resolve) => {
        const c = spawn(process.execPath, [path.join(ROOT, 'bin/hermod.js'), ...args], {
          cwd: ROOT,
          env: { ...process.env, HERMOD_CORE_ADDRESS: coreAddress, ...env },
        });
        let out = '';
        let stdout = '';
        let stderr = '';
        c.stdout.setEncoding('utf8');
        c.stderr.setEncoding('utf8');
        c.stdout.on('data', (d: string) => {
          out += d;
          stdout += d;
        });
        c.stderr.on('data', (d: string) => {
          out += d;
          stderr += d;
        });
        // 'close', not 'exit': both streams read to their end.
        c.on('close', (code) => resolve({ code, output: out, stdout, stderr }));
      }),
    ca: () => fs.readFileSync(path.join(options.dataDir, 'tls/self-signed.crt'), 'utf8'),
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    async kill9() {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
      await exited;
      // The group's children die with it, a moment later: gone before a restart opens their data directory
      // (a child left unreaped still counts, hence the bound).
      await eventually(() => !processGroupAlive(child.pid!), 5_000, 20).catch(() => undefined);
    },
  };
}

function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

interface RunningLine {
  https: string;
  http: string;
  metrics: string;
  core: string;
}

/** The supervisor's "hermod is running" line: where everything listens, ports as bound. */
function runningLine(output: string): RunningLine | undefined {
  const line = output
    .split('\n')
    .slice(0, -1)
    .find((l) => l.includes('"msg":"hermod is running"'));
  return line ? (JSON.parse(line) as RunningLine) : undefined;
}
