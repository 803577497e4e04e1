import { CHANNELS } from '../../lib/channels';
import { topicName } from './bus';

/**
 * The consumer groups whose backlog operators watch, each on its topic: every
 * channel's worker pool, core's readers of statuses, replies, campaign
 * fan-out and Intelligent Messaging, and the callback senders. The metrics
 * (bus-lag-monitor.ts) and the operations API show the same ones.
 */
export const CONSUMER_GROUPS: readonly { topic: string; group: string }[] = [
  ...CHANNELS.map((channel) => ({ topic: topicName(channel), group: `${channel}-workers` })),
  { topic: topicName('status'), group: 'core-status' },
  { topic: topicName('inbound'), group: 'core-inbound' },
  { topic: topicName('callbacks'), group: 'callback-senders' },
  { topic: topicName('fanout'), group: 'campaign-fanout' },
  { topic: topicName('im'), group: 'im-orchestrator' },
];
