import { HermodError } from '../../lib/errors';
import { stageOf, type MessageStatus } from '../domain/message-status';

/**
 * What an Intelligent Messaging message is to do, stored with the message
 * (as its content) so that a restart can pick up where it stopped: the
 * resolved destinations, the message, and the ordered delivery attempts.
 */
export const IM_CHANNELS = ['wab', 'sms', 'mms', 'email', 'rcs'] as const;
export type ImChannel = (typeof IM_CHANNELS)[number];

export interface ImAttemptPlan {
  channel: ImChannel;
  /** The status that counts as success ('' : the channel's delivered state). */
  event: string;
  /** Seconds to reach it (1..604800); 0 or absent: HERMOD_IM_DEFAULT_TIMEOUT (24 h unless set). */
  timeout?: number;
}

export interface ImPlan {
  type: 'text' | 'media' | 'template';
  /** Text for channels that send text (templates rendered with their parameters). */
  text: string;
  media?: { mimeType: string; url: string };
  template?: { id: string; name: string; language: string; parameters: { name: string; text: string }[] };
  destination: { mobile: string; email: string; whatsappId: string };
  attempts: ImAttemptPlan[];
  reference: string;
  schedulerPipe: string;
  subject: string;
}

/** Events an attempt may wait for, by the statuses that satisfy them (IM vocabulary, `delivered` as a synonym). */
const EVENT_STATUS: Record<string, MessageStatus> = {
  submitted: 'submitted',
  sent: 'sent',
  delivered: 'received',
  received: 'received',
  read: 'read',
};

export function isKnownEvent(event: string): boolean {
  return event === '' || Object.hasOwn(EVENT_STATUS, event.toLowerCase());
}

/**
 * Channels whose carriers report `read`: WhatsApp and RBM read receipts (and
 * a WhatsApp reply, replies-as-read.ts). SMPP receipts, MMS reports and SMTP
 * say nothing of reading, so an attempt there waiting for `read` could only
 * time out. Every channel reports submitted, sent and delivered.
 */
const READ_CHANNELS: readonly ImChannel[] = ['wab', 'rcs'];

/** Why an attempt on `channel` can never reach `event` (undefined when it can). */
export function neverReported(channel: ImChannel, event: string): string | undefined {
  if (EVENT_STATUS[event.toLowerCase()] !== 'read' || READ_CHANNELS.includes(channel)) return undefined;
  return `${channel} never reports read: only ${READ_CHANNELS.join(', ')} do`;
}

/** Whether an attempt at `status` has reached its event. */
export function reachedEvent(event: string, status: MessageStatus): boolean {
  const wanted = EVENT_STATUS[event.toLowerCase()] ?? 'received';
  if (wanted === 'read') return status === 'read';
  if (status === 'read') return true;
  if (stageOf(status) >= 4 && status !== 'received') return false; // a failure
  return stageOf(status) >= stageOf(wanted);
}

export function isFailure(status: MessageStatus): boolean {
  return stageOf(status) === 4 && status !== 'received';
}

/** Where a channel sends to for this destination ('' : it cannot reach it). */
export function addressFor(channel: ImChannel, d: ImPlan['destination']): string {
  switch (channel) {
    case 'email':
      return d.email;
    case 'wab':
      return d.whatsappId || d.mobile;
    default:
      return d.mobile;
  }
}

/** `wab:read:60,sms` → attempts (channel[:event[:timeout seconds]]). */
export function parseAttemptList(text: string): ImAttemptPlan[] {
  const attempts = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const [channel, event = '', timeout] = part.split(':');
      if (!(IM_CHANNELS as readonly string[]).includes(channel ?? ''))
        throw new HermodError('invalid_attrib', `attempts: unknown channel ${JSON.stringify(channel)} in ${JSON.stringify(text)}`);
      if (!isKnownEvent(event)) throw new HermodError('invalid_attrib', `attempts: unknown event ${JSON.stringify(event)}`);
      const never = neverReported(channel as ImChannel, event);
      if (never) throw new HermodError('invalid_attrib', `attempts: ${part}: ${never}`);
      const seconds = timeout === undefined || timeout === '' ? undefined : Number(timeout);
      if (seconds !== undefined && !(Number.isInteger(seconds) && seconds >= 0 && seconds <= 604_800))
        throw new HermodError('invalid_attrib', `attempts: timeout must be 0..604800 seconds`);
      return { channel: channel as ImChannel, event, ...(seconds !== undefined ? { timeout: seconds } : {}) };
    });
  if (attempts.length === 0 || attempts.length > 10) throw new HermodError('invalid_attrib', 'attempts: 1..10 attempts');
  return attempts;
}
