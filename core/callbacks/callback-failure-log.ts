import { FifoMap } from '../../lib/fifo-map';
import type { Logger } from '../../lib/log';

/** At most one line per application and receiver this often while it fails. */
const LINE_EVERY_MS = 60_000;
/** Receivers remembered as failing; past this the one failing longest is forgotten (its next failure is a first again). */
const MAX_FAILING = 10_000;

interface Failing {
  /** Failing now (false once it answered again; kept so that a receiver that flaps is still said once a minute). */
  down: boolean;
  since: number;
  lastLineAt: number;
  lastUpLineAt: number;
  /** Failures since the last line. */
  unsaid: number;
  /** Failures since it last answered. */
  total: number;
}

/**
 * Tells an operator why callbacks stall, where the metrics only count: a warn
 * line when a try fails, naming the application, the receiver (the URL's
 * origin: no credentials, path or query) and the reason (the HTTP status, or
 * the error with its code: ERR_TLS_CERT_ALTNAME_INVALID, ECONNREFUSED, a
 * timeout), at most one a minute per application and receiver, counting the
 * failures since its last line; and an info line when that receiver answers
 * again, as seldom. A receiver that fails one callback in two (500, then 200)
 * is said once a minute, not at every turn. The callback's body is never in it. The dispatcher keeps it on its
 * own thread, which sees every outcome whether the HTTP ran there or on a
 * delivery thread.
 */
export function createCallbackFailureLog(
  log: Logger,
  options: {
    now?: () => number;
    /** The line's message and the name of its count: `callback refused` and `refused` for callbacks core will not send. */
    line?: string;
    counted?: string;
  } = {},
) {
  const now = options.now ?? Date.now;
  const line = options.line ?? 'callback try failed';
  const counted = options.counted ?? 'failures';
  const failing = new FifoMap<string, Failing>();
  /** Receivers failing now: delivered() has nothing to do while none is. */
  let down = 0;

  return {
    failed(applicationId: string, url: string, reason: string): void {
      const receiver = receiverOf(url);
      const key = `${applicationId} ${receiver}`;
      const at = now();
      let f = failing.get(key);
      if (!f) {
        f = { down: false, since: at, lastLineAt: Number.NEGATIVE_INFINITY, lastUpLineAt: Number.NEGATIVE_INFINITY, unsaid: 0, total: 0 };
        failing.set(key, f);
        while (failing.size > MAX_FAILING) {
          const oldest = failing.oldestKey()!;
          if (failing.get(oldest)!.down) down--;
          failing.delete(oldest);
        }
      }
      if (!f.down) {
        f.down = true;
        f.since = at;
        f.total = 0;
        down++;
      }
      f.unsaid++;
      f.total++;
      if (at - f.lastLineAt < LINE_EVERY_MS) return;
      log.warn(line, { application: applicationId, receiver, reason, [counted]: f.unsaid });
      f.lastLineAt = at;
      f.unsaid = 0;
    },

    /** Called on every delivered callback: nothing to do (and no URL parsed) while no receiver is failing. */
    delivered(applicationId: string, url: string): void {
      if (down === 0) return;
      const receiver = receiverOf(url);
      const key = `${applicationId} ${receiver}`;
      const f = failing.get(key);
      if (!f?.down) return;
      f.down = false;
      down--;
      const at = now();
      if (at - f.lastUpLineAt < LINE_EVERY_MS) return;
      f.lastUpLineAt = at;
      log.info('callback receiver answers again', { application: applicationId, receiver, failures: f.total, failingForMs: at - f.since });
    },
  };
}

/** The URL's origin: scheme, host and port, without the credentials, path or query it may hold. */
function receiverOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(not a URL)';
  }
}
