import type { Logger } from './log';

/** A logger that keeps its warnings (and drops the rest), for tests of what a component tells operators. */
export function keptWarnings(): { log: Logger; warnings: { msg: string; fields: Record<string, unknown> }[] } {
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const log: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (msg, fields = {}) => void warnings.push({ msg, fields }),
    error: () => undefined,
    child: () => log,
  };
  return { log, warnings };
}
