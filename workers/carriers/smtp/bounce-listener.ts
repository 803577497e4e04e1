import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Logger } from '../../../lib/log';
import { DeliveryStatusError } from './delivery-status';
import { readDsnMessage } from './dsn-message';
import { messageIdOfVerp, type ReturnPaths } from './verp';

/** A recipient's permanent failure, as a bounce told it, about one of our messages. */
export interface Bounce {
  messageId: string;
  recipient: string;
  /** RFC 3463 code, e.g. 5.1.1. */
  status: string;
  /** The remote server's words (`Diagnostic-Code`), or the status code when it gave none. */
  diagnostic: string;
  at: number;
}

export interface BounceListenerOptions {
  host: string;
  /** 0 picks a free port (logged). */
  port: number;
  /** Our return paths' domain and secret; mail to any other address, or one whose tag is not ours, is refused at RCPT TO. */
  returnPaths: ReturnPaths;
  log: Logger;
  /** Resolves once the bounce is safe; a rejection answers 451 so the sending server tries again later. */
  onBounce(bounce: Bounce): Promise<void>;
  /** Largest report accepted, in bytes (default 1 MB: a DSN returns at most the headers or the message). */
  maxBytes?: number;
}

export interface BounceListener {
  start(): Promise<{ host: string; port: number }>;
  stop(): Promise<void>;
}

type SmtpReply = Error & { responseCode: number };
const reply = (responseCode: number, text: string): SmtpReply => Object.assign(new Error(text), { responseCode });

/**
 * The inbound SMTP server bounces come to: it takes mail only for our VERP
 * signed return paths (bounces+<id>=<tag>@domain), reads each as an RFC 3464 DSN, and
 * hands every `failed` recipient on as a Bounce of the message its return path
 * names. It answers 250 only once those are safe, so a bounce it accepted is
 * never lost. Delays and successes are logged and dropped; so is mail that is
 * not a DSN (an autoresponder writing to the return path), since a sender
 * retrying it would not make it one.
 */
export function createBounceListener(o: BounceListenerOptions): BounceListener {
  let server: SMTPServer | undefined;

  const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, done: (err?: Error | null) => void): void => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      if (stream.sizeExceeded) return done(reply(552, '5.3.4 report too big'));
      const ids = session.envelope.rcptTo.map((r) => messageIdOfVerp(r.address, o.returnPaths)).filter((id): id is string => id !== undefined);
      let bounces: Bounce[];
      try {
        bounces = bouncesOf(Buffer.concat(chunks), ids);
      } catch (err) {
        if (!(err instanceof DeliveryStatusError)) return done(reply(451, '4.3.0 could not read the report'));
        o.log.info('mail to a return path that is not a delivery status notification; dropped', { ids, reason: err.message });
        return done();
      }
      Promise.all(bounces.map((b) => o.onBounce(b))).then(
        () => done(),
        (err: unknown) => {
          o.log.warn('could not record a bounce; the sender will try again', { ids, err });
          done(reply(451, '4.3.0 try again later'));
        },
      );
    });
  };

  return {
    async start() {
      if (!server) {
        const s = new SMTPServer({
          banner: 'hermod bounce listener',
          authOptional: true,
          disabledCommands: ['AUTH', 'STARTTLS'],
          disableReverseLookup: true,
          size: o.maxBytes ?? 1024 * 1024,
          logger: false,
          onRcptTo: (address, _session, cb) => cb(messageIdOfVerp(address.address, o.returnPaths) ? undefined : reply(550, '5.1.1 no such return path here')),
          onData,
        });
        s.on('error', (err: Error) => o.log.debug('bounce listener session error', { err }));
        await new Promise<void>((resolve, reject) => {
          s.server.once('error', reject);
          s.server.listen({ port: o.port, host: o.host, exclusive: true }, () => {
            s.server.off('error', reject);
            resolve();
          });
        });
        server = s;
        o.log.info('bounce listener listening', { host: o.host, port: (s.server.address() as AddressInfo).port, domain: o.returnPaths.domain });
      }
      return { host: o.host, port: (server.server.address() as AddressInfo).port };
    },
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        for (const c of s.connections) c.close();
      });
    },
  };
}

/** The permanent failures a report tells about the messages `ids` (an e-mail has one recipient, so each failure is its message's). */
export function bouncesOf(raw: Buffer, ids: readonly string[]): Bounce[] {
  const { status } = readDsnMessage(raw);
  const failed = status.recipients.filter((r) => r.action === 'failed');
  const at = Date.now();
  return ids.flatMap((messageId) =>
    failed.map((r) => ({ messageId, recipient: r.finalRecipient, status: r.status, diagnostic: r.diagnosticCode || r.status, at })),
  );
}
