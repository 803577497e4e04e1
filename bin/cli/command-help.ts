/**
 * What `hermod <command> … --help` prints: the lines of the usage that
 * describe that command (with their continuation lines), or all of it when
 * none does. A help flag is never taken as an argument: `apps create --help`
 * once created an application named "--help".
 */
export function commandHelp(usage: string, command: string): string {
  const lines = usage.split('\n');
  const picked: string[] = [];
  let inCommand = false;
  for (const line of lines) {
    const starts = /^ {2}\S/.test(line);
    if (starts) inCommand = line.startsWith(`  ${command} `) || line === `  ${command}`;
    else if (!/^ {3,}\S/.test(line)) inCommand = false;
    if (inCommand) picked.push(line);
  }
  return picked.length > 0 ? `usage: hermod\n${picked.join('\n')}` : usage;
}

/** Whether the arguments after the command ask for help. */
export function asksForHelp(args: readonly string[]): boolean {
  return args.some((a) => a === '--help' || a === '-h');
}
