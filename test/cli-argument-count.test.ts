import { describe, expect, it } from 'vitest';
import { usageProblem } from '../bin/cli/usage-problem';

describe("arguments an operators' command does not take", () => {
  it('refuses a value with spaces left unquoted, instead of keeping its first word', () => {
    expect(usageProblem(['apps', 'set-password', '商店', 'kupu', 'huna', 'hou'])).toBe(
      'too many arguments for "apps set-password" (it takes <name> <password>): "huna" "hou" — quote a value that has spaces',
    );
    expect(usageProblem(['templates', 'set', 'kāinga', 'hoko', 'Kia', 'ora', '{{param1}}'])).toBe(
      'too many arguments for "templates set" (it takes <name> <template> <content>): "ora" "{{param1}}" — quote a value that has spaces',
    );
  });

  it('refuses an argument a command has no place for', () => {
    expect(usageProblem(['keys', 'issue', 'kāinga', 'beta'])).toBe(
      'too many arguments for "keys issue" (it takes <name>): "beta" — quote a value that has spaces',
    );
    expect(usageProblem(['apps', 'list', 'kāinga'])).toBe('too many arguments for "apps list" (it takes none): "kāinga"');
    expect(usageProblem(['campaigns', 'show', 'kāinga', '42', '43'])).toBe(
      'too many arguments for "campaigns show" (it takes <application> <campaign-id>): "43" — quote a value that has spaces',
    );
  });

  it('takes any number where the usage says so, and does not count options or their values', () => {
    expect(usageProblem(['apps', 'set-sources', 'kāinga', '4001', '4002', 'HEMI'])).toBeUndefined();
    expect(usageProblem(['blocklist', 'add', '--app', 'kāinga', '+6421', '+6422', '+6427'])).toBeUndefined();
    expect(usageProblem(['contacts', 'set', 'kāinga', '7d3f', '--mobile', '+6421000001', '--email', 'hēmi@example.com'])).toBeUndefined();
    expect(usageProblem(['campaigns', 'dry-run', 'kāinga', '42', '--content', 'Kia ora {{param1}} 👋🏽'])).toBeUndefined();
    expect(usageProblem(['apps', 'create', 'kāinga', '--password', 'kupu huna', '--api-key'])).toBeUndefined();
  });

  it('refuses an option given twice, instead of taking the first', () => {
    expect(usageProblem(['apps', 'set-callbacks', 'kāinga', '--status', 'https://a.example.com/', '--status', 'https://b.example.com/'])).toBe(
      '--status given twice',
    );
    expect(usageProblem(['apps', 'create', 'kāinga', '--api-key', '--api-key'])).toBe('--api-key given twice');
  });
});
