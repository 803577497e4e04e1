import { describe, expect, it } from 'vitest';
import type { Logger } from '../../lib/log';
import { createCallbackFailureLog } from './callback-failure-log';

/** The lines a logger was given, as an operator would read them. */
function recordingLog() {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}): void => {
      lines.push({ level, msg, fields });
    };
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return { log, lines };
}

const HOOK = 'https://hook:s3cr%C4%93t@hooks.example.com:8443/status?token=abc';

describe('the log of failed callback tries', () => {
  it('says at once why a try failed, naming the application and the receiver without its credentials, path or query', () => {
    const { log, lines } = recordingLog();
    createCallbackFailureLog(log, { now: () => 0 }).failed('app-one', HOOK, 'callback failed: … (ERR_TLS_CERT_ALTNAME_INVALID)');
    expect(lines).toEqual([
      {
        level: 'warn',
        msg: 'callback try failed',
        fields: {
          application: 'app-one',
          receiver: 'https://hooks.example.com:8443',
          reason: 'callback failed: … (ERR_TLS_CERT_ALTNAME_INVALID)',
          failures: 1,
        },
      },
    ]);
    expect(JSON.stringify(lines)).not.toMatch(/hook:|s3cr|status|token/);
  });

  it('writes at most one line a minute for a receiver that stays down, counting the failures since the last', () => {
    const { log, lines } = recordingLog();
    let now = 1_000_000;
    const failures = createCallbackFailureLog(log, { now: () => now });
    for (let i = 0; i < 120; i++, now += 1000) failures.failed('app-one', HOOK, `callback receiver answered ${500 + (i % 4)}`);
    expect(lines.map((l) => [l.level, l.fields.failures, l.fields.reason])).toEqual([
      ['warn', 1, 'callback receiver answered 500'],
      ['warn', 60, 'callback receiver answered 500'],
    ]);
  });

  it('keeps each application and receiver to its own minute', () => {
    const { log, lines } = recordingLog();
    const failures = createCallbackFailureLog(log, { now: () => 0 });
    failures.failed('app-one', HOOK, 'callback receiver answered 503');
    failures.failed('app-two', HOOK, 'callback receiver answered 503');
    failures.failed('app-one', 'https://other.example.com/hook', 'callback failed: connect ECONNREFUSED 10.0.0.1:443');
    failures.failed('app-one', 'https://hooks.example.com:8443/reply', 'callback receiver answered 503');
    expect(lines.map((l) => [l.fields.application, l.fields.receiver])).toEqual([
      ['app-one', 'https://hooks.example.com:8443'],
      ['app-two', 'https://hooks.example.com:8443'],
      ['app-one', 'https://other.example.com'],
    ]);
  });

  it('says once when the receiver answers again, with how many tries failed and for how long, and a new failure a minute after the last line', () => {
    const { log, lines } = recordingLog();
    let now = 0;
    const failures = createCallbackFailureLog(log, { now: () => now });
    failures.delivered('app-one', HOOK);
    for (; now < 90_000; now += 10_000) failures.failed('app-one', HOOK, 'callback failed: Headers Timeout Error (UND_ERR_HEADERS_TIMEOUT)');
    failures.delivered('app-one', HOOK);
    failures.delivered('app-one', HOOK);
    now = 125_000;
    failures.failed('app-one', HOOK, 'callback receiver answered 502');
    expect(lines.map((l) => [l.level, l.msg, l.fields])).toEqual([
      ['warn', 'callback try failed', expect.objectContaining({ failures: 1 })],
      ['warn', 'callback try failed', expect.objectContaining({ failures: 6 })],
      ['info', 'callback receiver answers again', { application: 'app-one', receiver: 'https://hooks.example.com:8443', failures: 9, failingForMs: 90_000 }],
      // Counting the failures since the last line: the two after it before the receiver answered, and this one.
      ['warn', 'callback try failed', expect.objectContaining({ failures: 3, reason: 'callback receiver answered 502' })],
    ]);
  });

  it('says a receiver that fails one callback in two (500, then 200) once a minute, not at every turn', () => {
    // What a trial saw: 811 lines in a minute for one receiver answering 500 then 200 to each event.
    const { log, lines } = recordingLog();
    let now = 0;
    const failures = createCallbackFailureLog(log, { now: () => now });
    for (; now < 120_000; now += 100) {
      failures.failed('app-one', HOOK, 'callback receiver answered 500');
      failures.delivered('app-one', HOOK);
    }
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.fields.failures)).toEqual([1, 600]);
    expect(lines.filter((l) => l.level === 'info')).toHaveLength(2);
  });

  it('says callbacks refused (a private address, a URL no receiver can be at) as seldom, counting the refusals since its last line', () => {
    const { log, lines } = recordingLog();
    let now = 0;
    const refusals = createCallbackFailureLog(log, { now: () => now, line: 'callback refused', counted: 'refused' });
    const reason = 'callback URL https://hooks.example.com:8443 resolves to a private or loopback address';
    for (; now < 61_000; now += 100) refusals.failed('app-one', HOOK, reason);
    expect(lines).toEqual([
      { level: 'warn', msg: 'callback refused', fields: { application: 'app-one', receiver: 'https://hooks.example.com:8443', reason, refused: 1 } },
      { level: 'warn', msg: 'callback refused', fields: { application: 'app-one', receiver: 'https://hooks.example.com:8443', reason, refused: 600 } },
    ]);
  });
});
