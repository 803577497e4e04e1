import { createTransport } from 'nodemailer';
import type { EmailConfig } from '../../../lib/config';
import type { Logger } from '../../../lib/log';
import type { OutboundJob } from '../../../core/ports/bus-payloads';
import type { Carrier, CarrierReport } from '../../carrier';
import { listenError } from '../../../lib/listen-error';
import { createBounceListener, type Bounce, type BounceListener } from './bounce-listener';
import { mailOptions } from './mail-options';
import { smtpError } from './smtp-error';
import type { ReturnPaths } from './verp';

/** Hosts where a simulator with a self-signed certificate may answer STARTTLS. */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

// nodemailer waits up to 2 min to connect: a relay that is down is found sooner, and the retry runs.
const CONNECTION_TIMEOUT_MS = 15_000;
// A silent relay is waited for 5 minutes: RFC 5321 §4.5.3.2 asks for 5 minutes at MAIL and RCPT and 10 after the
// data, and nodemailer has one timer for every phase. Giving up after 60 s sent a mail again whose relay was still
// taking it (a trial: a relay answering after 65 s got every such mail twice); a relay hung at RCPT now holds a try
// 5 minutes. Other batches go on meanwhile, and a mail sent again keeps its Message-ID (mail-options.ts).
const SOCKET_TIMEOUT_MS = 300_000;
// Below the socket timeout, so an idle pooled connection is closed by us, quietly.
const IDLE_TIMEOUT_MS = 30_000;

export interface SmtpCarrier extends Carrier {
  /** Starts reading bounces when configured (config.bounceListener); call once the worker listens for reports. Where it listens; undefined when off. */
  startBounceListener(): Promise<{ host: string; port: number } | undefined>;
}

/**
 * E-mail over a pool of SMTP connections to one relay. The relay's 250 after
 * DATA is the last thing SMTP tells us about a message, so each accepted
 * message is also reported `received` at once. A bounce that comes later to
 * the message's return path (bounce-listener.ts) is reported `failed`, with
 * the status code as error code and the remote server's diagnostic as detail.
 */
export function createSmtpCarrier(config: EmailConfig, log: Logger): SmtpCarrier {
  const relay = `${config.host}:${config.port}`;
  if (config.bounceDomain && !config.bounceSecret) throw new Error('a bounce domain needs a bounce secret to sign return paths with');
  const returnPaths: ReturnPaths | undefined = config.bounceDomain ? { domain: config.bounceDomain, secret: config.bounceSecret! } : undefined;
  const transport = createTransport({
    pool: true,
    host: config.host,
    port: config.port,
    // false: plain first, then STARTTLS whenever the server offers it (nodemailer's default).
    secure: config.secure,
    maxConnections: config.maxConnections,
    auth: config.user ? { user: config.user, pass: config.pass } : undefined,
    tls: LOOPBACK.has(config.host) ? { rejectUnauthorized: false } : undefined,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: CONNECTION_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    idleTimeout: IDLE_TIMEOUT_MS,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const reportListeners: ((r: CarrierReport) => void | Promise<void>)[] = [];
  let verified: Promise<void> | undefined;
  let bounces: BounceListener | undefined;

  const reportBounce = async (b: Bounce): Promise<void> => {
    if (reportListeners.length === 0) throw new Error('no worker takes reports yet');
    log.info('e-mail bounced', { id: b.messageId, status: b.status, diagnostic: b.diagnostic });
    const report: CarrierReport = { carrierId: '', messageId: b.messageId, status: 'failed', at: b.at, errorCode: b.status, detail: b.diagnostic };
    await Promise.all(reportListeners.map((l) => l(report)));
  };

  // One check of the relay at start, for the log; it never holds sending back,
  // since a relay that is down now is the retry loop's business.
  const verifyOnce = (): Promise<void> =>
    (verified ??= transport.verify().then(
      () => log.info('SMTP relay reachable', { relay }),
      (err: unknown) => log.warn('SMTP relay check failed', { relay, err: smtpError(err) }),
    ));

  return {
    name: 'smtp',
    async send(job: OutboundJob) {
      const info = await transport.sendMail(mailOptions(job, config.from, returnPaths)).catch((err: unknown) => {
        throw smtpError(err);
      });
      const carrierId = info.messageId;
      // Deferred so the worker can usually store the carrier id and publish `submitted`
      // first; when `received` wins anyway, core orders the two by stage.
      setImmediate(() => {
        const report: CarrierReport = { carrierId, status: 'received', at: Date.now(), errorCode: '' };
        for (const l of reportListeners) l(report);
      });
      return { carrierIds: [carrierId] };
    },
    ready: verifyOnce,
    onReport: (l) => void reportListeners.push(l),
    // SMTP submission has no way back; replies arrive at a mailbox, not here.
    onInbound: () => undefined,
    async startBounceListener() {
      const where = config.bounceListener;
      if (!where || !returnPaths) return undefined;
      bounces ??= createBounceListener({ ...where, returnPaths, log, onBounce: reportBounce });
      return bounces.start().catch((err: unknown) => {
        throw listenError(err, 'HERMOD_BOUNCE_SMTP_PORT', where.host, where.port, 'another e-mail worker’s bounce listener');
      });
    },
    async close() {
      await bounces?.stop();
      transport.close();
    },
  };
}
