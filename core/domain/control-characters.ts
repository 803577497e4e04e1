import { HermodError } from '../../lib/errors';

/** C0 controls, DEL and C1 controls: Unicode's general category Cc. */
const CONTROL = /\p{Cc}/gu;
/** Bidirectional embeddings, overrides (U+202A–U+202E) and isolates (U+2066–U+2069). */
const DIRECTION_CONTROL = /[\u202a-\u202e\u2066-\u2069]/;
/** What a cell of the CLI's rows writes out visibly: controls, a backslash (doubled), line separators, direction controls. */
const ESCAPED_IN_A_CELL = /[\p{Cc}\\\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;
/** What shows nothing: white space and format characters (zero-width space and joiners, word joiner, BOM). */
const INVISIBLE = /[\p{White_Space}\p{Cf}]/gu;
/** What an SMS text may hold of them: LF and CR are in GSM 03.38's alphabet, and a tab goes out as UCS-2 as typed. */
const SMS_LINE_CONTROLS = new Set(['\t', '\n', '\r']);
const ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0' };

/** A character as U+XXXX. */
export const codePointName = (c: string): string => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** The first control character of `text` that is not in `allowed`, or undefined. */
function firstControl(text: string, allowed: ReadonlySet<string>): string | undefined {
  for (const m of text.matchAll(CONTROL)) if (!allowed.has(m[0])) return m[0];
  return undefined;
}

const refuse = (field: string, description: string): HermodError =>
  new HermodError('invalid_attrib', `${field} ${description}`, { fields: [{ field, description }] });

/**
 * Refuses a name (of a list, campaign or template) holding a control
 * character: tab, newline, NUL, ESC, DEL or C1. It breaks the CLI's
 * tab-separated lines and the logs, can drive an operator's terminal, and
 * cannot be typed back; so do U+2028 and U+2029, which end a line for
 * line-oriented tools, and the direction controls that can disguise a name on
 * screen. A name of nothing visible (spaces, a zero-width space) is refused
 * too. Letters of any script, spaces, punctuation and emoji are names.
 */
export function checkNameText(value: string, field: string): void {
  const c = firstControl(value, new Set());
  if (c !== undefined) throw refuse(field, `has a control character (${codePointName(c)}); names are printable text`);
  // Line-oriented tools (Python's splitlines, editors) end a row at these, as at a newline.
  const separator = /[\u2028\u2029]/.exec(value)?.[0];
  if (separator !== undefined)
    throw refuse(field, `has a ${separator === '\u2028' ? 'line' : 'paragraph'} separator (${codePointName(separator)}); names are one line`);
  // Embeddings, overrides and isolates reorder what follows on screen (`invoice \u202Egpj.exe` shows as `invoice exe.jpg`):
  // the Trojan Source characters. Arabic and Hebrew names take their direction from their letters without them.
  const direction = DIRECTION_CONTROL.exec(value)?.[0];
  if (direction !== undefined)
    throw refuse(
      field,
      `has a direction control (${codePointName(direction)}) that can make a name read as another; letters of any script take their own direction`,
    );
  if (value.replace(INVISIBLE, '') === '') throw refuse(field, 'has nothing visible; names are printable text');
}

/**
 * A client's own label of a message (`reference`, `class`): kept, shown back and put in callbacks, so without
 * NUL, ESC, DEL or C1, as SMS text is; line breaks and tabs, which text may hold, pass (a multi-line reference).
 */
export function checkLabels(fields: { reference?: string; class?: string }): void {
  for (const field of ['reference', 'class'] as const) {
    const value = fields[field];
    const c = value ? firstControl(value, SMS_LINE_CONTROLS) : undefined;
    if (c !== undefined) throw refuse(field, `has a control character (${codePointName(c)}) that is not a line break or tab`);
  }
}

/**
 * Refuses an SMS text (content, a template, an automatic response) holding a
 * control character a handset cannot show: NUL, BEL, ESC, DEL, C1 and the
 * like. Line breaks (LF, CR) and tabs are text.
 */
export function checkSmsText(value: string, field: string): void {
  const c = firstControl(value, SMS_LINE_CONTROLS);
  if (c !== undefined)
    throw refuse(field, `has a control character (${codePointName(c)}) a handset cannot show; line breaks and tabs are the only ones allowed`);
}

/**
 * Text for one cell of a tab-separated line: control characters, line and
 * paragraph separators and direction controls written visibly (`\t`, `\n`,
 * `\u001B`, `\u2028`, `\u202E`) and a backslash doubled, so stored text
 * (names taken before control characters were refused) can neither split a
 * row nor reach the terminal as an escape sequence.
 */
export function escapeControlCharacters(text: string): string {
  if (text.search(ESCAPED_IN_A_CELL) === -1) return text;
  return text.replace(ESCAPED_IN_A_CELL, (c) => (c === '\\' ? '\\\\' : (ESCAPES[c] ?? `\\u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`)));
}
