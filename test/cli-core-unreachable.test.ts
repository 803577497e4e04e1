import { describe, expect, it } from 'vitest';
import { runAdminCommand } from '../bin/cli/admin-cli';
import { resolveConfig } from '../lib/config';
import { freePort } from './support/free-port';

describe('an operators’ command while core is not there', () => {
  it.each([
    ['campaigns list', ['campaigns', 'list', 'acme']],
    ['apps list', ['apps', 'list']],
  ])(
    '%s names the address it tried and the variable that sets it',
    async (_name, args) => {
      const address = `127.0.0.1:${await freePort()}`;
      const lines: string[] = [];
      const code = await runAdminCommand(resolveConfig({ HERMOD_CORE_ADDRESS: address }), args, (line) => void lines.push(line));
      expect(code).toBe(1);
      expect(lines.join('\n')).toMatch(new RegExp(`^error: core is unavailable at ${address.replace(/\./g, '\\.')} \\(HERMOD_CORE_ADDRESS\\)`));
    },
    30_000,
  );
});
