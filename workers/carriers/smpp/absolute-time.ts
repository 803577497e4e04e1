/**
 * SMPP absolute time (SMPP 3.4 section 7.1.1): `YYMMDDhhmmsstnnp`, tenths of
 * a second in `t`, and `nn` quarter hours of difference from UTC in the
 * direction `p` ('+' ahead, '-' behind). Years are read as 20YY, as receipt
 * dates are.
 */
const ABSOLUTE = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d)(\d{2})([+-])$/;

/** epoch ms → an absolute time in UTC (`…00+`). */
export function formatAbsoluteTime(ms: number): string {
  const d = new Date(ms);
  const p = (v: number) => String(v).padStart(2, '0');
  return (
    p(d.getUTCFullYear() % 100) +
    p(d.getUTCMonth() + 1) +
    p(d.getUTCDate()) +
    p(d.getUTCHours()) +
    p(d.getUTCMinutes()) +
    p(d.getUTCSeconds()) +
    String(Math.floor(d.getUTCMilliseconds() / 100)) +
    '00+'
  );
}

/** An absolute time → epoch ms; undefined for '' , a relative time (`…R`) or anything malformed. */
export function parseAbsoluteTime(text: string): number | undefined {
  const m = ABSOLUTE.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second, tenths, quarters] = m.slice(1, 9).map(Number) as number[];
  if (month! < 1 || month! > 12 || day! < 1 || day! > 31 || hour! > 23 || minute! > 59 || second! > 59 || quarters! > 48) return undefined;
  const local = Date.UTC(2000 + year!, month! - 1, day!, hour!, minute!, second!, tenths! * 100);
  // A day its month lacks (31 November) would roll over into the next: malformed.
  if (new Date(local).getUTCDate() !== day) return undefined;
  // The written time is `nn` quarter hours ahead of UTC ('+') or behind it ('-').
  const offset = quarters! * 15 * 60_000 * (m[9] === '+' ? 1 : -1);
  return local - offset;
}
