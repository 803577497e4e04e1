/**
 * `apps set-im-rate-limit`'s value as core stores it: requests per second
 * 0..100 (0: no limit), -1 for `default`; undefined for anything else.
 * Written as digits only: Number() took '' as 0 (no limit), '-1' as the
 * service default, and '1e1' or ' 5' as numbers.
 */
export function imRateLimit(text: string): number | undefined {
  if (text === 'default') return -1;
  if (!/^[0-9]{1,3}$/.test(text)) return undefined;
  const perSecond = Number(text);
  return perSecond <= 100 ? perSecond : undefined;
}
