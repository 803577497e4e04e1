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

/**
 * The channels a process started for every one of them (`hermod start`'s
 * workers, core running its workers) runs pools of: RCS only with a
 * service-account key to get RBM's tokens with (`rcsKeyed`). Without one
 * every RCS send would be rejected for good; with no RCS pool, an RCS attempt
 * waits in its topic and falls back when it times out, and an RCS worker
 * started later with a key sends what is still owed.
 */
export function channelsThatCanSend(channels: readonly Channel[], rcsKeyed: boolean): Channel[] {
  return channels.filter((c) => c !== 'rcs' || rcsKeyed);
}

/** Said at a start that runs no RCS pool for want of a key. */
export const NO_RCS_KEY =
  'no RCS worker runs: RBM needs a service-account key (HERMOD_RCS_SERVICE_ACCOUNT); RCS attempts wait and fall back when they time out';
