import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHermod, type HermodProcess } from './support/hermod-process';

describe('operators’ commands on a mistyped application name', () => {
  let hermod: HermodProcess;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-cli-typo-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
  });

  afterAll(async () => {
    await hermod?.stop();
  });

  const commands: string[][] = [
    ['apps', 'set-callbacks', 'acmé', '--status', 'https://hooks.example.com/x'],
    ['apps', 'set-password', 'acmé', 'pw'],
    ['apps', 'set-im-attempts', 'acmé', 'sms'],
    ['apps', 'set-im-rate-limit', 'acmé', '5'],
    ['apps', 'set-sources', 'acmé', '5000'],
    ['keys', 'issue', 'acmé'],
    ['keys', 'revoke', 'acmé'],
    ['optouts', 'list', 'acmé'],
  ];
  for (const args of commands) {
    it(`refuses \`hermod ${args.slice(0, 2).join(' ')}\` for an application that does not exist, and creates none`, async () => {
      const result = await hermod.cli(args);
      expect(result.code, result.output).toBe(1);
      expect({ stdout: result.stdout, stderr: result.stderr }).toEqual({
        stdout: '',
        stderr: 'error: no application named acmé (hermod apps create acmé makes one)\n',
      });
      expect((await hermod.cli(['apps', 'list'])).output).not.toMatch(/acmé/);
    });
  }

  it('still changes an application that exists', async () => {
    const result = await hermod.cli(['apps', 'set-callbacks', 'acme', '--status', 'https://hooks.example.com/x']);
    expect(result.code, result.output).toBe(0);
  });
});
