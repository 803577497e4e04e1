import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { eventually } from './eventually';
import { enginesRequired } from './engines-required';

/**
 * Whether a Prometheus tool is on the PATH, and what a test should do if not:
 * skip with the reason printed, except in CI, where .ci/run installs it and
 * its absence is a failure.
 */
export function prometheusTool(name: 'prometheus' | 'promtool'): { available: boolean; reason: string } {
  const probe = spawnSync(name, ['--version'], { encoding: 'utf8' });
  if (probe.error === undefined && probe.status === 0) return { available: true, reason: '' };
  const reason = `${name} is not installed (apt-get install prometheus; .ci/run does this in CI)`;
  if (enginesRequired) throw new Error(`${reason}, and CI must run the Prometheus tests`);
  console.warn(`skipping: ${reason}`);
  return { available: false, reason };
}

/** promtool with `args`, in `cwd`: exit code and everything it printed. */
export function promtool(args: string[], cwd: string): { code: number | null; output: string } {
  const r = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  return { code: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

export interface PrometheusProcess {
  url: string;
  /** An instant query through the HTTP API; throws on an error answer. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

/** Debian's `prometheus`, scraping `targets` every second with `ruleFiles`, on a port of its choosing and a temporary data directory. */
export async function startPrometheus(options: { targets: string[]; ruleFiles?: string[]; bearerToken?: string }): Promise<PrometheusProcess> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-prometheus-'));
  const job = {
    job_name: 'hermod',
    static_configs: [{ targets: options.targets }],
    ...(options.bearerToken ? { authorization: { type: 'Bearer', credentials: options.bearerToken } } : {}),
  };
  const config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: options.ruleFiles ?? [],
    scrape_configs: [job],
  };
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), stringify(config));
  // Port 0: Prometheus logs the address it got (`msg="Listening on" address=127.0.0.1:41083`).
  const child: ChildProcess = spawn(
    'prometheus',
    [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, '--web.listen-address=127.0.0.1:0'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const url = await Promise.race([
    eventually(
      async () => {
        const port = /msg="Listening on" address=127\.0\.0\.1:(\d+)/.exec(output)?.[1];
        if (!port || child.exitCode !== null) return undefined;
        const ready = await fetch(`http://127.0.0.1:${port}/-/ready`).then(
          (r) => r.ok,
          () => false,
        );
        return ready ? `http://127.0.0.1:${port}` : undefined;
      },
      60_000,
      200,
    ),
    exited.then(() => Promise.reject(new Error(`prometheus exited while starting:\n${output}`))),
  ]).catch((err: Error) => {
    child.kill('SIGKILL');
    throw new Error(`prometheus did not become ready: ${err.message}\n${output}`);
  });

  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: unknown } };
      if (body.status !== 'success') throw new Error(`query ${expr} failed: ${body.error}`);
      if (body.data!.resultType !== 'vector') throw new Error(`query ${expr} returned a ${body.data!.resultType}`);
      return body.data!.result as { metric: Record<string, string>; value: [number, string] }[];
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
