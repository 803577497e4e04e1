/** The channels with a worker pool of their own; `hermod worker --channel` takes one of them, or several separated by commas. */
export const CHANNELS = ['sms', 'email', 'wab', 'rcs', 'mms'] as const;
export type Channel = (typeof CHANNELS)[number];

export function isChannel(value: string): value is Channel {
  return (CHANNELS as readonly string[]).includes(value);
}

/** `sms` or `email,wab`: the channels named, each once, or the first name that is not a channel. */
export function parseChannels(value: string): { channels: Channel[] } | { unknown: string } {
  const channels: Channel[] = [];
  for (const name of value.split(',').map((n) => n.trim())) {
    if (!isChannel(name)) return { unknown: name };
    if (!channels.includes(name)) channels.push(name);
  }
  return { channels };
}
