import { openJsonLinesFile, type JsonLinesFile } from '../../lib/json-lines-file';
import { isMessageStatus } from '../domain/message-status';
import type { StatusUpdate } from '../ports/bus-payloads';

/**
 * Delivery reports held until their carrier id matches a message
 * (unmatched-reports.ts), on disk: each was acknowledged to its carrier when
 * its batch was, so after a crash this file is all that is left of it. A
 * report held again, or already matched before the crash, is harmless:
 * statuses never move backwards and a duplicate is ignored.
 */
export function openHeldReportsFile(file: string, fsync: boolean): { file: JsonLinesFile<StatusUpdate>; kept: StatusUpdate[] } {
  return openJsonLinesFile<StatusUpdate>(file, fsync, readReport, (u) => u);
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
