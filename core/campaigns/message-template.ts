import { HermodError } from '../../lib/errors';
import { MAX_SMS_CHARACTERS } from '../domain/sms-segments';
import { checkSmsText } from '../domain/control-characters';

/**
 * Campaign content with member placeholders: `{{param1}}` .. `{{param6}}` and
 * `{{destination}}` (spaces inside the braces allowed). A parameter the member
 * does not have renders as nothing. Any other `{{...}}` is refused when the
 * campaign is scheduled, not discovered a million times at send time.
 */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const KNOWN = /^(param[1-6]|destination)$/;

/** Whether `text` holds a placeholder (`{{…}}`): what only a campaign's content fills. */
export function hasPlaceholder(text: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(text);
}

export type RenderMember = (member: { destination: string; params: readonly string[] }) => string;

export function compileContent(content: string): RenderMember {
  const unknown = [...content.matchAll(PLACEHOLDER)].map((m) => m[1]!).filter((name) => !KNOWN.test(name));
  if (unknown.length > 0) {
    throw new HermodError(
      'unprocessable',
      `content has unknown placeholders: ${[...new Set(unknown)].map((n) => `{{${n}}}`).join(', ')} (use {{param1}}..{{param6}} or {{destination}})`,
    );
  }
  // Literal text and placeholders alternate: pieces[0], slot 0, pieces[1], slot 1, ...
  const pieces: string[] = [];
  const slots: number[] = []; // 0..5 a parameter, -1 the destination
  let last = 0;
  for (const m of content.matchAll(PLACEHOLDER)) {
    pieces.push(content.slice(last, m.index));
    slots.push(m[1] === 'destination' ? -1 : Number(m[1]!.slice(5)) - 1);
    last = m.index + m[0].length;
  }
  pieces.push(content.slice(last));
  if (slots.length === 0) return () => content;
  return (member) => {
    let out = pieces[0]!;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      out += (slot < 0 ? member.destination : (member.params[slot] ?? '')) + pieces[i + 1]!;
    }
    return out;
  };
}

/**
 * Content a campaign or template is refused for when it is given, not found
 * out at send time for every member: unknown placeholders, more than an
 * SMS interface takes for a message (MAX_SMS_CHARACTERS, before members'
 * parameters fill it in), or a control character a handset cannot show.
 */
export function validateContent(content: string): void {
  checkSmsText(content, 'content');
  const characters = characterCount(content);
  if (characters > MAX_SMS_CHARACTERS) {
    throw new HermodError('unprocessable', `content: must NOT have more than ${MAX_SMS_CHARACTERS} characters (it has ${characters})`);
  }
  compileContent(content);
}

/** Characters of a text as MAX_SMS_CHARACTERS counts them: code points, as JSON Schema does (👋 is one, 👋🏽 two). */
export function characterCount(text: string): number {
  let characters = 0;
  for (const _ of text) characters++;
  return characters;
}

/**
 * Why a member's filled-in message cannot be sent, or undefined: its
 * parameters took it over MAX_SMS_CHARACTERS (content of 1,590 characters and
 * a 50-character name), the most the SMS interfaces take for one message.
 */
export function renderedTooLong(text: string): string | undefined {
  // Every code point is one or two UTF-16 units: a text this short is within the limit without counting (every member's, at fan-out).
  if (text.length <= MAX_SMS_CHARACTERS) return undefined;
  const characters = characterCount(text);
  if (characters <= MAX_SMS_CHARACTERS) return undefined;
  return `personalised message is ${characters} characters, over the ${MAX_SMS_CHARACTERS} an SMS message may have`;
}
