/** A fixed UTC offset as RFC 3339 writes it: 780 → +13:00, -210 → -03:30, 0 → +00:00. */
export function utcOffsetName(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
