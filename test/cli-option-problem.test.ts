import { describe, expect, it } from 'vitest';
import { ADMIN_USAGE } from '../bin/cli/admin-usage';
import { commandHelp } from '../bin/cli/command-help';
import { usageProblem } from '../bin/cli/usage-problem';

/** Each operators' command as `group verb`, as its usage names it. */
const COMMANDS = [...new Set([...ADMIN_USAGE.matchAll(/^ {2}([a-z-]+) ([a-z-]+)/gm)].map((m) => `${m[1]} ${m[2]}`))];

describe("options an operators' command does not take", () => {
  it('names a misspelled option, and the options the command takes, instead of ignoring it', () => {
    expect(usageProblem(['apps', 'set-callbacks', 'kāinga', '--statuz', 'https://x.example.com/'])).toBe(
      'unknown option --statuz for "apps set-callbacks" (it takes --status <url>, --reply <url>, --im-status <url>, --rotate-secret, --keep-old-secret <duration>)',
    );
    expect(usageProblem(['apps', 'create', '商店', '--pasword', 'x'])).toBe('unknown option --pasword for "apps create" (it takes --password <pw>, --api-key)');
  });

  it('says a command that takes no options takes none', () => {
    expect(usageProblem(['campaigns', 'list', 'kāinga', '--bogus'])).toBe('unknown option --bogus: "campaigns list" takes no options');
    expect(usageProblem(['apps', 'set-password', '商店', 'kupuhipa', '--api-key'])).toBe('unknown option --api-key: "apps set-password" takes no options');
    expect(usageProblem(['optouts', 'list', 'kāinga', '--app', 'kāinga'])).toBe('unknown option --app: "optouts list" takes no options');
  });

  it('refuses another command’s option, and an option written with its value after =', () => {
    expect(usageProblem(['blocklist', 'add', '--app', 'kāinga', '--mobile', '+6421'])).toBe(
      'unknown option --mobile for "blocklist add" (it takes --app <name>)',
    );
    expect(usageProblem(['apps', 'set-callbacks', 'kāinga', '--status=https://x.example.com/'])).toBe(
      'write the value of --status after a space: --status <url>',
    );
  });

  it('says an option is missing its value, at the end of the line or followed by another option', () => {
    expect(usageProblem(['apps', 'set-callbacks', 'kāinga', '--status'])).toBe('--status needs a value: --status <url>');
    expect(usageProblem(['apps', 'set-callbacks', 'kāinga', '--status', '--reply', 'https://x.example.com/'])).toBe('--status needs a value: --status <url>');
    expect(usageProblem(['apps', 'set-quota', '商店', '--messages', '10', '--per'])).toBe('--per needs a value: --per hour|day|month');
    // An empty value, as from an unset shell variable: an application with an empty password.
    expect(usageProblem(['apps', 'create', 'pūtea', '--password', ''])).toBe('--password needs a value: --password <pw>');
    // Clearing and setting at once: which was meant is not known (it cleared, and said so).
    expect(usageProblem(['apps', 'set-quota', '商店', '--clear', '--messages', '5', '--per', 'day'])).toBe(
      '--clear takes no other option: give it alone, or --messages and --per without it',
    );
    expect(usageProblem(['campaigns', 'dry-run', 'kāinga', '42', '--template'])).toBe('--template needs a value: --template <name>');
  });

  it('takes every option each command’s usage names, with a value where it needs one', () => {
    for (const command of COMMANDS) {
      const help = commandHelp(ADMIN_USAGE, command);
      // An option and whether it takes a value, as the usage writes it (`--status <url>`) somewhere among its mentions.
      const named = new Map<string, boolean>();
      for (const m of help.matchAll(/(--[a-z-]+)( <[^>]+>| hour\|)?/g)) named.set(m[1]!, named.get(m[1]!) === true || m[2] !== undefined);
      // Its arguments, as many as its first line names (`<name>`, `[<application>]`) once its options are taken out.
      const arguments_ =
        help
          .split('\n')[1]!
          .split(/ {2,}/)[1]!
          .replace(/--[a-z-]+( <[^>]+>| hour\|[a-z|]+)?/g, '')
          .match(/<[^>]+>/g) ?? [];
      const values = arguments_.map((_, i) => ['kāinga', '42', 'kōwhai', 'reo', 'tinana'][i]!);
      for (const [option, takesValue] of named) {
        // Any value but a quota's, which is checked here as set-im-rate-limit's limit is.
        const args = [...command.split(' '), ...values, option, ...(takesValue ? [option === '--messages' ? '250' : 'kōwhai'] : [])];
        expect(usageProblem(args), args.join(' ')).toBeUndefined();
      }
    }
  });

  it('refuses apps set-callbacks without any of its options, which changed nothing and said it had set them', () => {
    expect(usageProblem(['apps', 'set-callbacks', 'kāinga-ā-iwi'])).toBe(
      '"apps set-callbacks" needs one or more of its options: --status <url>, --reply <url>, --im-status <url>, --rotate-secret, --keep-old-secret <duration>',
    );
    expect(usageProblem(['apps', 'set-callbacks', 'kāinga-ā-iwi', '--rotate-secret'])).toBeUndefined();
    expect(usageProblem(['apps', 'set-callbacks', 'kāinga-ā-iwi', '--reply', ''])).toBeUndefined();
  });

  it('refuses a quota not written as digits, as set-im-rate-limit refuses its limit (a trial: 0x10 set 16, 1e3 set 1,000)', () => {
    for (const written of ['0x10', '1e3', '1.5e1', ' 7', '7.0', '-5', '0', '１０'])
      expect(usageProblem(['apps', 'set-quota', 'kāinga', '--messages', written, '--per', 'day']), written).toBe(
        `the quota is a whole number of messages, 1 or more, written in digits (got ${JSON.stringify(written)})`,
      );
    expect(usageProblem(['apps', 'set-quota', 'kāinga', '--messages', '1000', '--per', 'day'])).toBeUndefined();
    expect(usageProblem(['apps', 'set-quota', 'kāinga', '--clear'])).toBeUndefined();
  });

  it('leaves values that only look like options alone', () => {
    expect(usageProblem(['apps', 'set-im-attempts', 'kāinga', ''])).toBeUndefined();
    expect(usageProblem(['templates', 'set', '商店', 'hoko', '--- Hoko nui! ---'])).toBeUndefined();
    expect(usageProblem(['apps', 'set-callbacks', 'kāinga', '--status', '', '--reply', ''])).toBeUndefined();
    expect(usageProblem(['apps', 'create', 'kāinga', '--password', '-x'])).toBeUndefined();
  });
});
