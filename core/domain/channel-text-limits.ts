/**
 * The longest text each chat channel takes in one message, in characters:
 * WhatsApp's Cloud API refuses a text body over 4,096 (error 100), RBM an
 * agent message's text over 3,072 (INVALID_ARGUMENT). SMS is bounded by its
 * 255 concatenated parts instead (sms-segments.ts); e-mail by nothing here.
 */
export const TEXT_LIMITS: Readonly<Record<string, { max: number; name: string }>> = {
  wab: { max: 4096, name: 'WhatsApp' },
  rcs: { max: 3072, name: 'RCS (RBM)' },
};

/** Why `channel` cannot carry `text` as one text message, or undefined when it can. */
export function textTooLongFor(channel: string, text: string): string | undefined {
  const limit = TEXT_LIMITS[channel];
  if (!limit || text.length <= limit.max) return undefined;
  const characters = [...text].length;
  if (characters <= limit.max) return undefined;
  return `${limit.name} takes a text of at most ${limit.max.toLocaleString('en')} characters; this one has ${characters.toLocaleString('en')}`;
}
