import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { freePort } from './free-port';
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

/** Debian's `prometheus`, scraping `targets` every second with `ruleFiles`, on a free port and a temporary data directory. */
export async function startPrometheus(options: { targets: string[]; ruleFiles?: string[] }): Promise<PrometheusProcess> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-prometheus-'));
  const config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: options.ruleFiles ?? [],
    scrape_configs: [{ job_name: 'hermod', static_configs: [{ targets: options.targets }] }],
  };
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), stringify(config));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'prometheus',
    [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited while starting:\n${output}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`prometheus did not become ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }

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
