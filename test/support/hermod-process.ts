import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from './free-port';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface HermodProcess {
  httpsPort: number;
  httpPort: number;
  metricsPort: number;
  baseUrl: string;
  dataDir: string;
  coreAddress: string;
  /** Runs `hermod <args>` against this service (operators' commands); resolves with exit code and output. */
  cli(args: string[]): Promise<{ code: number | null; output: string }>;
  /** The self-signed certificate the service created, to trust it in clients. */
  ca(): string;
  output(): string;
  /** SIGTERM and wait for a clean exit. */
  stop(): Promise<number | null>;
  /** kill -9 of the supervisor and every process it started. */
  kill9(): Promise<void>;
}

/**
 * Runs `hermod start` as a real process group, exactly as a user would, and
 * resolves once it says it is running.
 */
export async function startHermod(options: {
  dataDir: string;
  env?: Record<string, string>;
  ports?: { https: number; http: number; metrics: number };
  /** Arguments for node itself (e.g. --cpu-prof); the supervisor's forks inherit them. */
  nodeArgs?: string[];
}): Promise<HermodProcess> {
  const ports = options.ports ?? { https: await freePort(), http: await freePort(), metrics: await freePort() };
  const coreAddress = options.env?.HERMOD_CORE_ADDRESS ?? `127.0.0.1:${await freePort()}`;
  const env = {
    ...process.env,
    HERMOD_DATA_DIR: options.dataDir,
    HERMOD_HTTPS_PORT: String(ports.https),
    HERMOD_HTTP_PORT: String(ports.http),
    HERMOD_METRICS_PORT: String(ports.metrics),
    HERMOD_HOST: '127.0.0.1',
    HERMOD_CORE_ADDRESS: coreAddress,
    HERMOD_BOOTSTRAP_APP: 'acme',
    HERMOD_BOOTSTRAP_PASSWORD: 'secret',
    HERMOD_LOG_LEVEL: 'info',
    // Tests that need the channel simulators run their own (fixed default ports would collide between test files).
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
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hermod did not start in time:\n${output}`)), 60_000);
    const check = (): void => {
      if (output.includes('"msg":"hermod is running"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`hermod exited with ${code} while starting:\n${output}`));
    });
  });

  return {
    httpsPort: ports.https,
    httpPort: ports.http,
    metricsPort: ports.metrics,
    baseUrl: `https://127.0.0.1:${ports.https}`,
    dataDir: options.dataDir,
    coreAddress,
    cli: (args) =>
      new Promise((resolve) => {
        const c = spawn(process.execPath, [path.join(ROOT, 'bin/hermod.js'), ...args], {
          cwd: ROOT,
          env: { ...process.env, HERMOD_CORE_ADDRESS: coreAddress },
        });
        let out = '';
        c.stdout.on('data', (d: Buffer) => (out += d.toString()));
        c.stderr.on('data', (d: Buffer) => (out += d.toString()));
        c.on('exit', (code) => resolve({ code, output: out }));
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
      // The group's children die with it; give the kernel a moment to free their ports.
      await new Promise((r) => setTimeout(r, 300));
    },
  };
}

export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
