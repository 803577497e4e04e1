import { randomUUID } from 'node:crypto';
import { afterEach } from 'vitest';
import type { OutboundJob } from '../../../core/ports/bus-payloads';
import type { EmailConfig } from '../../../lib/config';
import { quietLog } from '../../simulators/smpp-test-kit';
import { createSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../../simulators/smtp-sink';
import { createSmtpCarrier, type SmtpCarrier } from './smtp-carrier';

/** Test helpers: a real SMTP sink on 127.0.0.1:0 and carriers pointed at it, all closed after each test. */
export function smtpTestKit() {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  });

  async function sink(options: Omit<SmtpSinkOptions, 'host' | 'port'> = {}): Promise<SmtpSink> {
    const s = createSmtpSink({ host: '127.0.0.1', port: 0, ...options });
    await s.start();
    cleanup.push(() => s.stop());
    return s;
  }

  function config(port: number, overrides: Partial<EmailConfig> = {}): EmailConfig {
    return { host: '127.0.0.1', port, secure: false, user: '', pass: '', from: 'hermod@localhost', maxConnections: 3, ...overrides };
  }

  function carrier(port: number, overrides: Partial<EmailConfig> = {}): SmtpCarrier {
    const c = createSmtpCarrier(config(port, overrides), quietLog);
    cleanup.push(() => c.close());
    return c;
  }

  return { sink, config, carrier, defer: (fn: () => Promise<unknown>) => cleanup.push(fn) };
}

/** An e-mail job with a fresh id; `over` sets anything else. */
export function emailJob(over: Partial<OutboundJob> = {}): OutboundJob {
  return {
    id: `msg-${randomUUID()}`,
    applicationId: 'app-test',
    channel: 'email',
    destination: 'ada@example.com',
    source: '',
    content: 'Kia ora, e hoa mā — tēnā koe! Привет, 你好世界 👋🏽🎉',
    acceptedAt: Date.now(),
    ...over,
  };
}
