/** The channels with a worker pool of their own; `hermod worker --channel` takes one of them. */
export const CHANNELS = ['sms', 'email', 'wab', 'rcs', 'mms'] as const;
export type Channel = (typeof CHANNELS)[number];

export function isChannel(value: string): value is Channel {
  return (CHANNELS as readonly string[]).includes(value);
}
