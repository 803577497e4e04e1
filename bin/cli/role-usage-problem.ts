import { CHANNELS, parseChannels } from '../../lib/channels';
import { optionProblem } from './option-problem';

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
  if (problem || command !== 'worker') return problem;
  const i = split.indexOf('--channel');
  const channels = `channels: ${CHANNELS.join(', ')}`;
  if (i < 0) return `hermod worker needs --channel <name>[,<name>...]; ${channels}`;
  const named = parseChannels(split[i + 1]!);
  return 'unknown' in named ? `unknown channel ${JSON.stringify(named.unknown)}; ${channels}` : undefined;
}
