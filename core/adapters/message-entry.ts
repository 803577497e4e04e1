import { MESSAGE_STATUSES, type MessageStatus } from '../domain/message-status';
import type { StatusEntry } from '../ports/state';

/**
 * What in-memory hot state knows of one message, as one number: its status and
 * the status's time (to the millisecond), and whether it was handed to its
 * carrier (submitted) and whether it must no longer be sent (cancelled). One
 * entry a message, not one in each of three maps: a million messages in flight
 * are a million map entries, each looked up once a step, not three million.
 *
 * Layout: ((time × 4 + marks) × 32 + status), exact for any time to the year
 * 4200 (2^53 / 128 ms). A message with marks but no status yet has status slot
 * NO_STATUS.
 */
const STATUS_SLOTS = 32;
const MARK_SLOTS = 4;
const NO_STATUS = STATUS_SLOTS - 1;
const STATUS_INDEX = new Map<MessageStatus, number>(MESSAGE_STATUSES.map((s, i) => [s, i]));

export const SUBMITTED = 1;
export const CANCELLED = 2;
export type Mark = typeof SUBMITTED | typeof CANCELLED;

/** An entry with no status and no marks: what a message not yet seen starts from. */
export const EMPTY_ENTRY = NO_STATUS;

export function withStatus(entry: number, status: MessageStatus, at: number): number {
  // A time that is no number would turn the whole entry, marks included, into NaN.
  if (!Number.isFinite(at)) throw new RangeError(`not a status time: ${at}`);
  return (Math.round(at) * MARK_SLOTS + marksOf(entry)) * STATUS_SLOTS + STATUS_INDEX.get(status)!;
}

export function withMark(entry: number, mark: Mark): number {
  const marks = marksOf(entry);
  return marks & mark ? entry : entry + mark * STATUS_SLOTS;
}

export function hasMark(entry: number | undefined, mark: Mark): boolean {
  return entry !== undefined && (marksOf(entry) & mark) !== 0;
}

/** The entry's status and its time; undefined when it only carries marks. */
export function statusOf(entry: number | undefined): StatusEntry | undefined {
  if (entry === undefined) return undefined;
  const rest = Math.floor(entry / STATUS_SLOTS);
  const index = entry - rest * STATUS_SLOTS;
  if (index === NO_STATUS) return undefined;
  return { status: MESSAGE_STATUSES[index]!, at: Math.floor(rest / MARK_SLOTS) };
}

function marksOf(entry: number): number {
  const rest = Math.floor(entry / STATUS_SLOTS);
  return rest - Math.floor(rest / MARK_SLOTS) * MARK_SLOTS;
}
