/**
 * The options each command takes, with the value each needs as its usage
 * writes it ('' for an option that takes none). An option not listed for a
 * command is one it does not take.
 */
const OPTIONS: Record<string, Record<string, string>> = {
  'apps create': { '--password': '<pw>', '--api-key': '' },
  'apps set-callbacks': { '--status': '<url>', '--reply': '<url>', '--im-status': '<url>', '--rotate-secret': '', '--keep-old-secret': '<duration>' },
  'apps set-quota': { '--messages': '<n>', '--per': 'hour|day|month', '--clear': '' },
  'blocklist add': { '--app': '<name>' },
  'blocklist remove': { '--app': '<name>' },
  'blocklist list': { '--app': '<name>' },
  'contacts set': { '--mobile': '<e164>', '--email': '<address>', '--whatsapp': '<id>' },
  'campaigns dry-run': { '--content': '<text>', '--template': '<name>' },
  worker: { '--channel': '<name>[,<name>...]' },
  reply: { '--carrier': '<name>', '--whatsapp': '' },
};

/**
 * Options whose empty value ('' from a shell variable that was not set) is
 * none: `apps create x --password ''` made an application with no password.
 * (An empty callback URL is one: it takes the callback away.)
 */
const NOT_EMPTY = new Set(['--password']);

/** Options of a command that undo what the others say: given with any of them, which one was meant is not known. */
const ALONE: Record<string, string> = { 'apps set-quota': '--clear' };

/** An argument that is an option: two dashes and a letter (`--- Sale ---` and `-1` are values). */
const OPTION = /^--[A-Za-z]/;

/**
 * What is wrong with the options of a command line (`args`: what follows the
 * command's own words), as one line, or undefined when nothing is. An option
 * the command does not take was ignored, so `--statuz <url>` set nothing and
 * said it had; one that needs a value and has none (the last argument, or
 * followed by another of the command's options) took nothing, or took that
 * option as its value.
 */
export function optionProblem(command: string, args: readonly string[]): string | undefined {
  const takes = OPTIONS[command] ?? {};
  const given = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!OPTION.test(arg)) continue;
    const value = takes[arg];
    if (value === undefined) {
      const named = arg.split('=')[0]!;
      if (arg.includes('=') && takes[named]) return `write the value of ${named} after a space: ${named} ${takes[named]}`;
      const known = optionsTaken(command);
      return known
        ? `unknown option ${arg} for ${JSON.stringify(command)} (it takes ${known})`
        : `unknown option ${arg}: ${JSON.stringify(command)} takes no options`;
    }
    // The command reads the first; a second, often a corrected one, was ignored.
    if (given.has(arg)) return `${arg} given twice`;
    given.add(arg);
    if (value === '') continue;
    const next = args[i + 1];
    if (next === undefined || takes[next] !== undefined || (NOT_EMPTY.has(arg) && next.trim() === '')) return `${arg} needs a value: ${arg} ${value}`;
    i++;
  }
  const alone = ALONE[command];
  if (alone && given.has(alone) && given.size > 1)
    return `${alone} takes no other option: give it alone, or ${[...given].filter((o) => o !== alone).join(' and ')} without it`;
  return undefined;
}

/** The options a command takes as its usage writes them (`--status <url>, --reply <url>, …`), or '' for none. */
export function optionsTaken(command: string): string {
  return Object.entries(OPTIONS[command] ?? {})
    .map(([option, value]) => (value ? `${option} ${value}` : option))
    .join(', ');
}

/**
 * The arguments of a command line (`args`: what follows the command's own
 * words) that are not its options or their values, for a line
 * `optionProblem` found nothing wrong with.
 */
export function positionalArguments(command: string, args: readonly string[]): string[] {
  const takes = OPTIONS[command] ?? {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const value = OPTION.test(arg) ? takes[arg] : undefined;
    if (value === undefined) positional.push(arg);
    else if (value !== '') i++;
  }
  return positional;
}
