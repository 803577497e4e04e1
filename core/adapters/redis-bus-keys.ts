/**
 * The Redis keys of the bus (see createRedisBus for the layout). A partition's
 * stream and its leases share the stream's hash tag, so one script can touch
 * both on a cluster; a topic's members share the topic's.
 */
export const streamKey = (prefix: string, topic: string, partition: number): string => `{${prefix}:${topic}:${partition}}`;

/** Which member of `group` consumes the partition of this stream now. */
export const leaseKey = (stream: string, group: string): string => `${stream}:owner:${group}`;

/** The live members of `group` on a topic. */
export const membersKey = (prefix: string, topic: string, group: string): string => `{${prefix}:${topic}}:members:${group}`;

/**
 * The bus' epoch: a random value set on first use, gone with the rest when Redis comes back empty, so a position
 * noted in one epoch is never compared with the streams of the next (their ids, from the clock, lie above the old
 * ones: a group reading them would seem to have acknowledged records that were lost).
 */
export const epochKey = (prefix: string): string => `${prefix}:bus-epoch`;
