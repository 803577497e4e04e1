/**
 * The longest text each chat channel takes in one message, in characters:
 * WhatsApp's Cloud API refuses a text body over 4,096 (error 100), RBM an
 * agent message's text over 3,072 (INVALID_ARGUMENT). SMS is bounded by its
 * 255 concatenated parts instead (sms-segments.ts); e-mail by nothing here.
 */
export const TEXT_LIMITS: Readonly<Record<string, { max: number; name: string; sentAsText: readonly MessageType[] }>> = {
  // A WhatsApp template goes as WhatsApp's own template, not as its filled-in text.
  wab: { max: 4096, name: 'WhatsApp', sentAsText: ['text'] },
  rcs: { max: 3072, name: 'RCS (RBM)', sentAsText: ['text', 'template'] },
};

/** An Intelligent Messaging message's type (a job of another interface is a text). */
type MessageType = 'text' | 'media' | 'template';

/**
 * Why `channel` cannot carry `text`, what a message of `type` sends as its
 * text there, or undefined when it can (or sends no text: a media message).
 */
export function textTooLongFor(channel: string, type: MessageType, text: string): string | undefined {
  const limit = TEXT_LIMITS[channel];
  if (!limit?.sentAsText.includes(type) || text.length <= limit.max) return undefined;
  const characters = [...text].length;
  if (characters <= limit.max) return undefined;
  return `${limit.name} takes a text of at most ${limit.max.toLocaleString('en')} characters; this one has ${characters.toLocaleString('en')}`;
}
