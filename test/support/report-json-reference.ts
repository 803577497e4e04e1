import type { ReportRecord } from '../../core/ports/campaign-store';

/**
 * The report's JSON as the service wrote it before the engine formatted it
 * (core's gRPC rows and the gateway's reportAsJson, as of the fourth session's
 * start), kept as the reference the engine's text must equal byte for byte:
 * the campaign's name as list_name, dates at the campaign's offset, texts
 * through JSON.stringify, rows joined by commas without the brackets.
 */
export function referenceReportJson(rows: readonly ReportRecord[], listName: string, offsetMinutes: number): string {
  const sentDate = createDateFormatter();
  const statusDate = createDateFormatter();
  const zone = JSON.stringify(offsetName(offsetMinutes));
  return rows
    .map(
      (r) =>
        `{"list_name":${JSON.stringify(listName)},"message_id":${r.messageNumericId},"mobile":${jsonString(r.mobile)},` +
        `"sent_date":"${r.sentAt > 0 ? sentDate(r.sentAt, offsetMinutes) : ''}","status":${JSON.stringify(r.status)},` +
        `"status_date":"${statusDate(r.statusAt, offsetMinutes)}","timezone":${zone}}`,
    )
    .join(',');
}

function createDateFormatter(): (ms: number, offsetMinutes: number) => string {
  let cachedSecond = Number.NaN;
  let cachedOffset = Number.NaN;
  let cachedPrefix = '';
  let cachedZone = '';
  return (ms, offsetMinutes) => {
    const local = ms + offsetMinutes * 60_000;
    const second = Math.floor(local / 1000);
    if (second !== cachedSecond || offsetMinutes !== cachedOffset) {
      cachedSecond = second;
      cachedOffset = offsetMinutes;
      cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19);
      cachedZone = offsetName(offsetMinutes);
    }
    const milli = local - second * 1000;
    return `${cachedPrefix}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}${cachedZone}`;
  };
}

function offsetName(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

const PLAIN = /^\+?[0-9]*$/;
const jsonString = (value: string): string => (PLAIN.test(value) ? `"${value}"` : JSON.stringify(value));
