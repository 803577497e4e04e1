import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAdminCommand } from '../bin/cli/admin-cli';
import { runStatusCommand } from '../bin/cli/status-cli';
import { resolveConfig } from '../lib/config';
import { freePort } from './support/free-port';

/** `hermod apps list` as its own process with HERMOD_CORE_ADDRESS set to `address`: how it ended and what it wrote. */
async function appsList(address: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, '../bin/hermod.js'), 'apps', 'list'], {
    env: { ...process.env, HERMOD_CORE_ADDRESS: address },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

describe('an operators’ command while core is not there', () => {
  it.each([
    ['campaigns list', ['campaigns', 'list', 'kāinga-ā-iwi']],
    ['apps list', ['apps', 'list']],
  ])(
    '%s names the address it tried and the variable that sets it, as an error and nothing as output',
    async (_name, args) => {
      const address = `127.0.0.1:${await freePort()}`;
      const output: string[] = [];
      const errors: string[] = [];
      const code = await runAdminCommand(
        resolveConfig({ HERMOD_CORE_ADDRESS: address }),
        args,
        (line) => void output.push(line),
        (line) => void errors.push(line),
      );
      expect(code).toBe(1);
      expect(errors.join('\n')).toMatch(new RegExp(`^error: core is unavailable at ${address.replace(/\./g, '\\.')} \\(HERMOD_CORE_ADDRESS\\)`));
      expect(output).toEqual([]);
    },
    30_000,
  );

  it('hermod status names the address it tried, as an error and nothing as output', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const output: string[] = [];
    const errors: string[] = [];
    const code = await runStatusCommand(
      resolveConfig({ HERMOD_CORE_ADDRESS: address }),
      (line) => void output.push(line),
      (line) => void errors.push(line),
    );
    expect(code).toBe(1);
    expect(errors.join('\n')).toMatch(new RegExp(`^error: core is unavailable at ${address.replace(/\./g, '\\.')} \\(HERMOD_CORE_ADDRESS\\)`));
    expect(output).toEqual([]);
  }, 30_000);

  it('says so on standard error, so `hermod apps list 2>/dev/null` prints nothing', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const { code, stdout, stderr } = await appsList(address);
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toMatch(/^error: core is unavailable at /);
  }, 60_000);

  it('says a setting it cannot use as one plain line on standard error, exit code 2, as its other errors', async () => {
    const { code, stdout, stderr } = await appsList('bogus');
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(/^error: configuration error: HERMOD_CORE_ADDRESS.*\n$/);
    expect(stderr.split('\n')).toHaveLength(2);
  }, 60_000);
});
