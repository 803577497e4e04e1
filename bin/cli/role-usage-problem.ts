import { CHANNELS, parseChannels } from '../../lib/channels';
import { optionProblem, positionalArguments } from './option-problem';

/** Commands whose arguments are words of their own (`reply <from> <to> <text>`, `grpc-certs <dir> <host>...`). */
const TAKE_ARGUMENTS = new Set(['reply', 'grpc-certs']);

/**
 * What is wrong with the command line of one of hermod's own commands (`start`,
 * a role, `reply`, `grpc-certs`; `args`: what follows the command), as the one
 * line hermod prints after `error: ` (with exit code 2), or undefined when
 * nothing is. A worker without `--channel` ran SMS: README names no default,
 * and a worker meant for e-mail then bound to the SMS carrier.
 */
export function roleUsageProblem(command: string, args: readonly string[]): string | undefined {
  // `--channel=email` as well as `--channel email`, as the worker has always taken it.
  const split = args.flatMap((a) => (a.startsWith('--channel=') ? ['--channel', a.slice('--channel='.length)] : [a]));
  const problem = optionProblem(command, split);
  if (problem) return problem;
  const [extra] = TAKE_ARGUMENTS.has(command) ? [] : positionalArguments(command, split);
  if (extra !== undefined) return `unexpected argument ${JSON.stringify(extra)}: ${JSON.stringify(command)} takes none`;
  if (command !== 'worker') return undefined;
  const i = split.indexOf('--channel');
  const channels = `channels: ${CHANNELS.join(', ')}`;
  if (i < 0) return `hermod worker needs --channel <name>[,<name>...]; ${channels}`;
  const named = parseChannels(split[i + 1]!);
  return 'unknown' in named ? `unknown channel ${JSON.stringify(named.unknown)}; ${channels}` : undefined;
}
