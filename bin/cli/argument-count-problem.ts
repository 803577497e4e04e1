import { ADMIN_USAGE } from './admin-usage';
import { positionalArguments } from './option-problem';

/** A command's arguments as its usage line writes them, options left out: `<name> <password>`, `[<address>...]`. */
function synopsis(command: string): { placeholders: string[]; any: boolean } {
  const line = ADMIN_USAGE.split('\n').find((l) => l.startsWith(`  ${command} `) || l === `  ${command}`) ?? '';
  const written = line.slice(2 + command.length).split(/ {2,}/)[0]!;
  const withoutOptions = written.replace(/--[a-z-]+(?: <[^>]+>| hour\|day\|month)?/g, '');
  const placeholders = [...withoutOptions.matchAll(/<[^>]+>(\.\.\.)?/g)].map((m) => m[0].replace('...', ''));
  return { placeholders, any: withoutOptions.includes('...') };
}

/**
 * An argument the command has no place for, as one line, or undefined. The
 * commands read their arguments by position, so a value with spaces left
 * unquoted (`apps set-password acme kupu huna`) was taken as its first word
 * and the rest ignored without a word.
 */
export function argumentCountProblem(command: string, args: readonly string[]): string | undefined {
  const { placeholders, any } = synopsis(command);
  if (any) return undefined;
  const extra = positionalArguments(command, args).slice(placeholders.length);
  if (extra.length === 0) return undefined;
  const listed = extra.map((a) => JSON.stringify(a)).join(' ');
  if (placeholders.length === 0) return `too many arguments for ${JSON.stringify(command)} (it takes none): ${listed}`;
  return `too many arguments for ${JSON.stringify(command)} (it takes ${placeholders.join(' ')}): ${listed} — quote a value that has spaces`;
}
