import { describe, expect, it } from 'vitest';
import { ADMIN_USAGE } from '../bin/cli/admin-usage';
import { asksForHelp, commandHelp } from '../bin/cli/command-help';

describe('help for one command', () => {
  it('prints the lines of that command, continuation lines with them, and nothing of the others', () => {
    const help = commandHelp(ADMIN_USAGE, 'apps');
    expect(help).toContain('  apps create <name> [--password <pw>]');
    expect(help).toContain('              [--api-key]');
    expect(help).not.toContain('blocklist add');
    expect(commandHelp(ADMIN_USAGE, 'campaigns')).toContain('campaigns dry-run');
  });

  it('prints the whole usage for a command it does not know', () => {
    expect(commandHelp(ADMIN_USAGE, 'kōrero')).toBe(ADMIN_USAGE);
  });

  it('takes --help or -h anywhere after the command as a question, never as an argument', () => {
    expect(asksForHelp(['create', '--help'])).toBe(true);
    expect(asksForHelp(['-h'])).toBe(true);
    expect(asksForHelp(['create', 'tēnā-koe'])).toBe(false);
  });
});
