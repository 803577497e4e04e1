import { ADMIN_USAGE } from './admin-usage';
import { argumentCountProblem } from './argument-count-problem';
import { imRateLimit } from './im-rate-limit';
import { optionProblem, optionsTaken } from './option-problem';
import { sourceAddressesProblem } from './source-addresses-problem';

/** Each operators' command as `group verb`, from the usage: a command is known exactly when its usage is printed. */
const COMMANDS = new Set([...ADMIN_USAGE.matchAll(/^ {2}([a-z-]+) ([a-z-]+)/gm)].map((m) => `${m[1]} ${m[2]}`));

/** Commands whose first argument is not an application name. */
const NO_APPLICATION_ARGUMENT = new Set(['apps list', 'blocklist add', 'blocklist remove', 'blocklist list']);

/** Where a command takes a template name: its argument's position. */
const TEMPLATE_ARGUMENT: Record<string, number> = { 'templates set': 3, 'im-templates set': 4 };

/**
 * What is wrong with an operators' command line, as the one line the CLI
 * prints after `error: ` (with the usage exit code, 2), or undefined when
 * nothing is that the command itself would not say. An empty name is a
 * variable left unset (`hermod apps create "$APP"`): printing the whole usage
 * did not say so, and `--app ''` chose the global block list.
 */
export function usageProblem(args: readonly string[]): string | undefined {
  const [group = '', verb] = args;
  if (verb === undefined) return `${JSON.stringify(group)} needs a command (hermod ${group} --help lists them)`;
  const command = `${group} ${verb}`;
  if (!COMMANDS.has(command)) return `unknown command ${JSON.stringify(command)} (hermod ${group} --help lists them)`;
  if (!NO_APPLICATION_ARGUMENT.has(command) && args[2] === '') return 'application name is empty';
  // `apps create --password x` made an application named --password.
  if (!NO_APPLICATION_ARGUMENT.has(command) && args[2]?.startsWith('--')) return `application name missing before ${args[2]}`;
  const app = args.indexOf('--app');
  if (group === 'blocklist' && app >= 0) {
    if (app + 1 >= args.length) return '--app needs an application name';
    if (args[app + 1] === '') return 'application name is empty';
  }
  const template = TEMPLATE_ARGUMENT[command];
  if (template !== undefined && args[template] === '') return 'template name is empty';
  const limit = command === 'apps set-im-rate-limit' ? args[3] : undefined;
  if (limit !== undefined && imRateLimit(limit) === undefined) {
    return `the rate limit is a whole number of requests per second, 0..100, or 'default' (got ${JSON.stringify(limit)})`;
  }
  return optionProblem(command, args.slice(2)) ?? argumentCountProblem(command, args.slice(2)) ?? valueProblem(command, args);
}

/** What is wrong with the values of a command line whose words and options are right. */
function valueProblem(command: string, args: readonly string[]): string | undefined {
  // Without one it changed nothing and said `callbacks of … set`.
  if (command === 'apps set-callbacks' && args[2] !== undefined && !args.slice(3).some((a) => a.startsWith('--'))) {
    return `${JSON.stringify(command)} needs one or more of its options: ${optionsTaken(command)}`;
  }
  if (command === 'apps set-sources') return sourceAddressesProblem(args.slice(3));
  // Number() took 0x10 as 16, 1e3 as 1,000 and ' 7' as 7.
  const quota = command === 'apps set-quota' ? args[args.indexOf('--messages') + 1] : undefined;
  if (quota !== undefined && args.includes('--messages') && !/^[1-9][0-9]{0,15}$/.test(quota)) {
    return `the quota is a whole number of messages, 1 or more, written in digits (got ${JSON.stringify(quota)})`;
  }
  // An unset shell variable, or spaces: an application anyone could log in to with an empty password.
  if (command === 'apps set-password' && args[3] !== undefined && args[3].trim() === '') return 'the password is empty';
  return undefined;
}
