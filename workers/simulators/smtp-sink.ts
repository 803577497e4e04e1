import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Logger } from '../../lib/log';
import { readMessage } from './smtp-sink-message';
import { sendBounce, type BounceTarget } from './sink-bounce';

/** A message the sink accepted: the envelope, and what it could read of the content. */
export interface SunkMail {
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** Envelope recipients the sink accepted (RCPT TO). */
  to: string[];
  subject: string;
  text: string;
  headers: Record<string, string>;
  messageId: string;
}

export interface SmtpSinkEvents {
  mail: [SunkMail];
  /** A bounce the sink sent (to the mail's envelope sender), or could not send. */
  bounced: [{ mail: SunkMail; recipient: string; error?: Error }];
}

export interface SmtpSinkOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  log?: Logger;
  /** Largest message accepted, in bytes (default 10 MB). */
  maxBytes?: number;
  /** How many of the latest mails `mails` keeps (default 1000). */
  keep?: number;
  /**
   * Where the bounces of `…+late-bounce…` recipients go (a getter may name a
   * port known only later); without one, such mail is accepted and kept only.
   */
  bounceTo?: BounceTarget | (() => BounceTarget | undefined);
  /** How long after accepting the sink bounces (default 1 s: a relay bounces once its next hop has refused, well after its 250). */
  bounceDelayMs?: number;
  /**
   * How long a `…+greylist…` recipient is refused (451 4.7.1) from the first
   * try of each envelope sender and recipient, as a greylisting server
   * (postgrey) does: default 5 min.
   */
  greylistMs?: number;
}

export interface SmtpSink extends EventEmitter<SmtpSinkEvents> {
  start(): Promise<{ host: string; port: number }>;
  /** Closes the listener and drops every open session at once. */
  stop(): Promise<void>;
  /** The latest accepted mails, oldest first. */
  readonly mails: SunkMail[];
  readonly port: number;
}

type SmtpReply = Error & { responseCode: number };
const reply = (responseCode: number, text: string): SmtpReply => Object.assign(new Error(text), { responseCode });

/**
 * What the sink answers at RCPT TO, by the local part of the address:
 * `bounce` or `…+bounce…` is refused for good, `…+defer…` for now.
 * `…+late-bounce…` is accepted, then bounced with a DSN, as a relay does when
 * the recipient's server refuses what the relay already took. `…+greylist…`
 * is refused for now until `greylist` says its time has passed.
 */
export function recipientVerdict(address: string, greylist?: (local: string) => number): SmtpReply | undefined {
  const local = address.slice(0, Math.max(0, address.lastIndexOf('@'))).toLowerCase();
  if (local === 'bounce' || local.includes('+bounce')) return reply(550, '5.1.1 mailbox unavailable');
  if (local.includes('+defer')) return reply(451, '4.3.0 try again later');
  const wait = local.includes('+greylist') && greylist ? greylist(local) : 0;
  if (wait > 0) return reply(451, `4.7.1 Greylisted, please try again in ${Math.ceil(wait / 1000)} seconds`);
  return undefined;
}

/**
 * A local SMTP server standing in for a relay: accepts every message for
 * every address except the bounce/defer ones above, and emits what it read.
 * Plain text only (no STARTTLS); AUTH is optional and any credentials pass.
 */
export function createSmtpSink(options: SmtpSinkOptions = {}): SmtpSink {
  return new Sink(options);
}

class Sink extends EventEmitter<SmtpSinkEvents> implements SmtpSink {
  readonly mails: SunkMail[] = [];
  private readonly host: string;
  private boundPort: number;
  private server: SMTPServer | undefined;

  constructor(private readonly o: SmtpSinkOptions) {
    super();
    this.host = o.host ?? '127.0.0.1';
    this.boundPort = o.port ?? 0;
  }

  get port(): number {
    return this.boundPort;
  }

  /** First tries of each sender and recipient, as a greylisting server keeps them (no expiry: a simulator's run is short). */
  private readonly firstTries = new Map<string, number>();

  /** How much longer this sender and recipient are refused; the first try starts the wait. */
  private greylistWait(pair: string): number {
    const now = Date.now();
    const first = this.firstTries.get(pair) ?? now;
    this.firstTries.set(pair, first);
    return Math.max(0, first + (this.o.greylistMs ?? 300_000) - now);
  }

  async start(): Promise<{ host: string; port: number }> {
    if (!this.server) {
      const server = new SMTPServer({
        banner: 'Hermod SMTP sink',
        authOptional: true,
        allowInsecureAuth: true,
        disabledCommands: ['STARTTLS'],
        disableReverseLookup: true,
        size: this.o.maxBytes ?? 10 * 1024 * 1024,
        logger: false,
        onAuth: (auth, _session, cb) => cb(null, { user: auth.username ?? 'anonymous' }),
        onRcptTo: (address, session, cb) =>
          cb(
            recipientVerdict(address.address, () =>
              this.greylistWait(`${session.envelope.mailFrom ? session.envelope.mailFrom.address : ''} ${address.address}`),
            ),
          ),
        onData: (stream, session, cb) => this.onData(stream, session, cb),
      });
      // Client resets and the like: a sink keeps going.
      server.on('error', (err: Error) => this.o.log?.debug('SMTP sink session error', { err }));
      await new Promise<void>((resolve, reject) => {
        server.server.once('error', reject);
        // Exclusive: a cluster worker under `hermod start` binds its own port (port 0 shared through the primary would collide).
        server.server.listen({ port: this.boundPort, host: this.host, exclusive: true }, () => {
          server.server.off('error', reject);
          resolve();
        });
      });
      this.server = server;
      this.boundPort = (server.server.address() as AddressInfo).port;
      this.o.log?.info('SMTP sink listening', { host: this.host, port: this.boundPort });
    }
    return { host: this.host, port: this.boundPort };
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const c of server.connections) {
        c.send(421, '4.3.2 sink shutting down');
        c.close();
      }
    });
  }

  private bounceLater(mail: SunkMail, recipient: string): void {
    const target = typeof this.o.bounceTo === 'function' ? this.o.bounceTo() : this.o.bounceTo;
    if (!target || !mail.from) return;
    setTimeout(() => {
      sendBounce(mail, recipient, target).then(
        () => this.emit('bounced', { mail, recipient }),
        (err: Error) => {
          this.o.log?.warn('SMTP sink could not send a bounce', { recipient, to: mail.from, err });
          this.emit('bounced', { mail, recipient, error: err });
        },
      );
    }, this.o.bounceDelayMs ?? 1000).unref();
  }

  private onData(stream: SMTPServerDataStream, session: SMTPServerSession, done: (err?: Error | null) => void): void {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      if (stream.sizeExceeded) return done(reply(552, '5.3.4 message too big'));
      const { mailFrom, rcptTo } = session.envelope;
      let mail: SunkMail;
      try {
        mail = { from: mailFrom ? mailFrom.address : '', to: rcptTo.map((r: SMTPServerAddress) => r.address), ...readMessage(Buffer.concat(chunks)) };
      } catch (err) {
        this.o.log?.error('SMTP sink could not read a message', { err });
        return done(reply(451, '4.3.0 sink could not read the message'));
      }
      this.mails.push(mail);
      if (this.mails.length > (this.o.keep ?? 1000)) this.mails.shift();
      // Before the 250, so a client that saw its send succeed finds the mail here.
      this.emit('mail', mail);
      done();
      for (const recipient of mail.to.filter(bouncesLater)) this.bounceLater(mail, recipient);
    });
  }
}

const bouncesLater = (address: string): boolean =>
  address
    .slice(0, Math.max(0, address.lastIndexOf('@')))
    .toLowerCase()
    .includes('+late-bounce');

/** The sink on `host:port`, started; for running it beside the service. */
export async function startSmtpSink(port: number, log: Logger, host = '127.0.0.1', bounceTo?: BounceTarget): Promise<SmtpSink> {
  const sink = createSmtpSink({ host, port, log, ...(bounceTo ? { bounceTo } : {}) });
  await sink.start();
  return sink;
}
