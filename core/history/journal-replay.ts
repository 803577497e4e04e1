import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../lib/log';
import { journalDamagedLines } from '../../lib/metrics';
import type { EncodedHistory } from './encoded-history';
import { readCheckpoint } from './journal-checkpoint';
import { readJournalLines, type DamagedLine } from './journal-lines';

export const segmentName = (n: number): string => `journal-${String(n).padStart(10, '0')}.ndjson`;
const SEGMENT_RE = /^journal-(\d{10})\.ndjson$/;

/** The journal's segment numbers, oldest first. */
export async function listSegments(dir: string): Promise<number[]> {
  return (await fsp.readdir(dir))
    .map((f) => SEGMENT_RE.exec(f)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

export interface Replay {
  /** Rows handed to the engine. */
  rows: number;
  /** Segments present before the replay: all of them may go once the engine has their rows. */
  segments: number[];
  /** The highest segment number seen (files or checkpoint): a new segment must come after it. */
  lastSegment: number;
}

/**
 * Hands the engine every row journaled after the checkpoint. Reads bytes, as
 * the checkpoint counts bytes. A line that cannot be read is set aside in
 * `damaged/` (the segment is deleted once replayed), logged and counted, and
 * the replay goes on: one bad line must not cost the rows after it.
 */
export async function replayJournal(dir: string, inner: EncodedHistory, log: Logger, checkpointFile: string): Promise<Replay> {
  const found = await readCheckpoint(checkpointFile);
  if (found.kind === 'unreadable') {
    // Losing acknowledged rows is worse than storing some twice.
    log.warn('history journal checkpoint is unreadable; replaying every journaled row, so some may be stored twice', {
      file: checkpointFile,
      text: found.text,
    });
  }
  const start = found.kind === 'found' ? found.checkpoint : { segment: 0, offset: 0 };
  const segments = await listSegments(dir);
  let rows = 0;
  for (const n of segments) {
    if (n < start.segment) continue; // flushed; its removal was cut short
    const bytes = await fsp.readFile(path.join(dir, segmentName(n)));
    const from = n === start.segment ? start.offset : 0;
    if (from > bytes.length)
      log.warn('history journal segment is shorter than its checkpoint says', { segment: segmentName(n), bytes: bytes.length, checkpoint: from });
    const lines = readJournalLines(bytes, from);
    if (lines.damaged.length > 0) await setAside(dir, n, lines.damaged, log);
    if (lines.tornBytes > 0) {
      log.info('history journal ends in a line the process died writing (never acknowledged); left out', {
        segment: segmentName(n),
        offset: bytes.length - lines.tornBytes,
        bytes: lines.tornBytes,
      });
    }
    if (lines.messages.length + lines.events.length > 0) await inner.insertEncoded(lines.messages.join('\n'), lines.events.join('\n'));
    rows += lines.messages.length + lines.events.length;
  }
  return { rows, segments, lastSegment: Math.max(segments.at(-1) ?? 0, start.segment) };
}

async function setAside(dir: string, segment: number, damaged: readonly DamagedLine[], log: Logger): Promise<void> {
  const folder = path.join(dir, 'damaged');
  await fsp.mkdir(folder, { recursive: true });
  const file = path.join(folder, segmentName(segment));
  await fsp.appendFile(file, Buffer.concat(damaged.flatMap((d) => [d.bytes, Buffer.from('\n')])));
  for (const d of damaged) {
    journalDamagedLines.inc({ reason: d.reason });
    log.warn('damaged history journal line set aside', {
      segment: segmentName(segment),
      offset: d.offset,
      bytes: d.bytes.length,
      reason: d.reason,
      setAsideIn: file,
    });
  }
}
