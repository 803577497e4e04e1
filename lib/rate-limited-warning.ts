import type { Logger } from './log';

/** How often a warning that keeps coming is said, at most, unless told otherwise. */
const EVERY_MS = 60_000;

/**
 * A warning that can come thousands of times a second while something it
 * depends on is away (a Redis outage of a second or two: one a delivery
 * receipt, one a partition's retry), said at most once per `everyMs`
 * (a minute) rather than each time: the first at once, each later line with
 * `count`, how many came since the line before (this one included). Those that
 * came after a line are said at the end of its period, with the fields (the
 * error) of the last of them, even if no more come: a burst's count is not
 * left waiting for the next failure, which may never come.
 */
export function rateLimitedWarning(log: Logger, message: string, options: { count: string; everyMs?: number }): (fields?: Record<string, unknown>) => void {
  const everyMs = options.everyMs ?? EVERY_MS;
  let toldAt = Number.NEGATIVE_INFINITY;
  let since = 0;
  let last: Record<string, unknown> = {};
  let timer: NodeJS.Timeout | undefined;
  const tell = (fields: Record<string, unknown>): void => {
    log.warn(message, { ...fields, [options.count]: since });
    toldAt = Date.now();
    since = 0;
  };
  return (fields = {}) => {
    since++;
    if (timer === undefined && Date.now() - toldAt >= everyMs) return tell(fields);
    last = fields;
    // Not kept alive for it: a process that stops within the period has said the first line, and loses only the count.
    timer ??= setTimeout(
      () => {
        timer = undefined;
        tell(last);
      },
      Math.max(0, toldAt + everyMs - Date.now()),
    ).unref();
  };
}
