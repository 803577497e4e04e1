import type { CallbackJob } from './callback-job';

/**
 * The outbox file: one line per change, appended in the order they happen.
 *
 * - `J<job as JSON>`: the job is owed (again, when it is a retry's new state);
 * - `S<event id>`: the job is settled (delivered, refused, given up, or handed
 *   to a bus that keeps it).
 *
 * JSON never holds a raw newline byte, so 0x0A ends every line whatever the
 * text. Replay works on bytes: lines are cut at 0x0A before any decoding, and
 * the bytes after the last 0x0A (a write torn by a crash, possibly in the
 * middle of a multi-byte character) were never acknowledged and are dropped.
 */
const NEWLINE = 0x0a;

export const encodeOwed = (jobs: readonly CallbackJob[]): Buffer => Buffer.from(jobs.map((j) => `J${JSON.stringify(j)}\n`).join(''), 'utf8');
export const encodeSettled = (eventIds: readonly string[]): Buffer => Buffer.from(eventIds.map((id) => `S${id}\n`).join(''), 'utf8');

export interface Replayed {
  /** Owed jobs by event id, in the order each was first owed. */
  owed: Map<string, CallbackJob>;
  /** Complete lines that could not be read (damaged), skipped. */
  damaged: number;
}

export function replayOutbox(bytes: Buffer): Replayed {
  const owed = new Map<string, CallbackJob>();
  let damaged = 0;
  let start = 0;
  for (let end = bytes.indexOf(NEWLINE, start); end !== -1; start = end + 1, end = bytes.indexOf(NEWLINE, start)) {
    if (end === start) continue;
    const kind = bytes[start];
    const text = bytes.toString('utf8', start + 1, end);
    if (kind === 0x53 /* S */) {
      owed.delete(text);
      continue;
    }
    if (kind === 0x4a /* J */) {
      try {
        const job = JSON.parse(text) as CallbackJob;
        if (typeof job.eventId === 'string' && typeof job.messageId === 'string') {
          owed.set(job.eventId, job);
          continue;
        }
      } catch {
        // counted below
      }
    }
    damaged++;
  }
  return { owed, damaged };
}
