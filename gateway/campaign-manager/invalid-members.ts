import { toHermodError } from '../../lib/errors';

/** Invalid members named in an answer; the rest are counted. */
const MAX_NAMED = 10;
/** Of a value quoted in a problem, the characters shown (a parameter may be thousands). */
const MAX_QUOTED = 24;

/**
 * The invalid members of one import, said as its answer says them: each by
 * its position in the body and its first problem in words, with the value
 * (`members[3].destination "+64 21 abc" is not a phone number: …`); the first
 * ten named, every other one counted, so an import of a million bad rows
 * still answers in a few lines.
 */
export function createInvalidMembers() {
  const named: string[] = [];
  let count = 0;
  return {
    get count(): number {
      return count;
    },
    /** A member the validator refused (`err`, a HermodError with its fields) at `index` of the body's members. */
    add(index: number, member: unknown, err: unknown): void {
      count++;
      if (named.length < MAX_NAMED) named.push(firstProblem(index, member, err));
    },
    /** `15 invalid members: …; … and 5 more`; `dropped` for error_messages, where the rest were kept. */
    describe(options: { dropped?: boolean } = {}): string {
      const more = count > named.length ? `; … and ${count - named.length} more` : '';
      return `${count} invalid member${count === 1 ? '' : 's'}${options.dropped ? ' dropped' : ''}: ${named.join('; ')}${more}`;
    },
  };
}

function firstProblem(index: number, member: unknown, err: unknown): string {
  const e = toHermodError(err);
  const at = `members[${index}]`;
  const first = e.fields[0];
  if (!first) return `${at}: ${e.message}`;
  const whole = first.field === '(body)';
  const value = whole ? member : member !== null && typeof member === 'object' ? (member as Record<string, unknown>)[first.field] : undefined;
  const quoted = quote(value);
  return `${whole ? at : `${at}.${first.field}`}${quoted ? ` ${quoted}` : ''} ${first.description}`;
}

/** A string, number or boolean as JSON (a long string cut short, with …); nothing for anything else. */
function quote(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value !== 'string') return '';
  const chars = Array.from(value);
  return JSON.stringify(chars.length > MAX_QUOTED ? `${chars.slice(0, MAX_QUOTED).join('')}…` : value);
}
