import { openJsonLinesFile } from '../../lib/json-lines-file';
import { isMessageStatus } from '../domain/message-status';
import type { StatusUpdate } from '../ports/bus-payloads';

/** The held reports on disk: a report held, or the carrier ids no longer held (matched or given up). */
export interface HeldReportsFile {
  /** Appends a report held (first held at `since`, now if not given), on disk before its batch is acknowledged. */
  hold(update: StatusUpdate, since?: number): void;
  /** Appends that the reports of these carrier ids are held no more, so no start holds them again. */
  release(carrierIds: readonly string[]): void;
  /** Lines appended since the file was last rewritten, reports and releases. */
  readonly lines: number;
  /** Replaces the file with the reports still held (an atomic rename), each with when it was first held. */
  rewrite(held: Iterable<StatusUpdate>, heldSince?: (update: StatusUpdate) => number | undefined): void;
  close(): void;
}

/** A report held and when it was first held (`heldSince` beside its fields on disk; absent in files of earlier versions). */
type HeldLine = { report: StatusUpdate; since?: number } | { released: string[] };

/**
 * Delivery reports held until their carrier id matches a message
 * (unmatched-reports.ts), on disk: each was acknowledged to its carrier when
 * its batch was, so after a crash this file is all that is left of it. A
 * report matched or given up is marked released by a line of its own (a
 * rewrite per match would copy every report still held), and opening the
 * file keeps only the reports never released. A release lost in a crash is
 * harmless: the report is held again, statuses never move backwards and a
 * duplicate is ignored.
 */
export function openHeldReportsFile(
  file: string,
  fsync: boolean,
): { file: HeldReportsFile; kept: StatusUpdate[]; heldSince(update: StatusUpdate): number | undefined } {
  const opened = openJsonLinesFile<HeldLine>(file, fsync, readLine, (line) =>
    'report' in line ? (line.since === undefined ? line.report : { ...line.report, heldSince: line.since }) : line,
  );
  // Replayed in order: a later report for a carrier id replaces the earlier one, and a release removes it.
  const held = new Map<string, { report: StatusUpdate; since?: number }>();
  for (const line of opened.kept) {
    if ('report' in line) held.set(line.report.carrierId!, line);
    else for (const carrierId of line.released) held.delete(carrierId);
  }
  const kept = [...held.values()].map((line) => line.report);
  const lines = opened.file;
  if (kept.length < opened.kept.length) lines.rewrite([...held.values()]);
  return {
    heldSince: (update) => held.get(update.carrierId ?? '')?.since,
    file: {
      hold: (update, since) => lines.keep({ report: update, since: since ?? Date.now() }),
      release: (carrierIds) => {
        if (carrierIds.length > 0) lines.keep({ released: [...carrierIds] });
      },
      get lines() {
        return lines.lines;
      },
      rewrite: (reports, heldSince) => lines.rewrite(Array.from(reports, (report) => ({ report, since: heldSince?.(report) }))),
      close: () => lines.close(),
    },
    kept,
  };
}

function readLine(value: unknown): HeldLine | undefined {
  const released = (value as { released?: unknown } | null)?.released;
  if (Array.isArray(released)) return { released: released.filter((c): c is string => typeof c === 'string') };
  const report = readReport(value);
  const since = (value as { heldSince?: unknown }).heldSince;
  return report && { report, ...(typeof since === 'number' && Number.isFinite(since) ? { since } : {}) };
}

function readReport(value: unknown): StatusUpdate | undefined {
  const v = value as Partial<Record<keyof StatusUpdate, unknown>> | null;
  if (
    !v ||
    typeof v.carrierId !== 'string' ||
    v.carrierId === '' ||
    typeof v.status !== 'string' ||
    !isMessageStatus(v.status) ||
    typeof v.at !== 'number' ||
    typeof v.channel !== 'string'
  )
    return undefined;
  const text = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);
  return {
    id: text(v.id) ?? '',
    status: v.status,
    at: v.at,
    channel: v.channel,
    carrierId: v.carrierId,
    errorCode: text(v.errorCode),
    detail: text(v.detail),
    trace: text(v.trace),
  };
}
