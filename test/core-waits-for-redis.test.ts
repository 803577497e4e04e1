import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { freePort } from './support/free-port';
import { startRole, type RoleProcess } from './support/role-process';

/**
 * README, hot state at scale: a process that cannot reach Redis, at start or
 * later, keeps reconnecting. Roles start in any order in a deployment (a
 * Redis restarted beside core, a pod scheduled first): core waits for Redis
 * rather than exit, and serves once Redis is up.
 */
describe('core started before its Redis', () => {
  const cleanup: (() => unknown)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  it('waits for Redis, saying so, and serves once Redis is up', async () => {
    const port = await freePort();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-core-waits-'));
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      HERMOD_DATA_DIR: dataDir,
      HERMOD_BUS: 'redis',
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: `redis://127.0.0.1:${port}`,
      HERMOD_REDIS_PREFIX: `kāinga-${port}`,
      HERMOD_CORE_ADDRESS: '127.0.0.1:0',
      HERMOD_METRICS_PORT: '0',
      HERMOD_BOUNCE_SMTP_PORT: '0',
      HERMOD_CORE_RUNS_WORKERS: 'true',
      HERMOD_BOOTSTRAP_APP: 'acme',
      HERMOD_BOOTSTRAP_PASSWORD: 'secret',
    };
    let core: RoleProcess | undefined;
    let saidSoAt: number | undefined;
    const starting = startRole(['core'], env, '"core listening"', (output) => {
      if (saidSoAt === undefined && output.includes('still waiting for Redis')) saidSoAt = Date.now();
    }).then((c) => (core = c));
    cleanup.push(() => core?.stop());
    starting.catch(() => undefined);

    // Until core says it is waiting, then two seconds more: on a loaded machine core reaches Redis seconds after
    // it is spawned. Its wait outlasts a Redis command's time limit (5 s), after which core used to exit.
    await eventually(async () => (saidSoAt !== undefined ? true : undefined), 60_000);
    await new Promise((r) => setTimeout(r, 2000));
    const redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    cleanup.push(() => redis.kill('SIGKILL'));

    await starting;
    expect(core!.output()).toContain('still waiting for Redis');
    expect(core!.output()).not.toContain('hermod failed to start');
    await eventually(() => (core!.output().includes('bootstrap application ready') ? true : undefined), 10_000);
  }, 90_000);
});
