import { createTransport } from 'nodemailer';

/** What a bounce needs of the mail it returns: the envelope sender it goes to, and the headers it quotes. */
interface ReturnedMail {
  from: string;
  headers: Record<string, string>;
}

/** Where the sink delivers the bounces it sends (the MX of the return path's domain, for a real relay). */
export interface BounceTarget {
  host: string;
  port: number;
}

/**
 * The delivery status notification a relay sends when the recipient's server
 * refuses a message it had accepted: multipart/report (RFC 6522) with a
 * message/delivery-status part (RFC 3464) and the returned headers, in the
 * shape Postfix writes (DSN_README).
 */
export function bounceReport(mail: ReturnedMail, recipient: string, reportingMta: string): string {
  const boundary = `${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}/${reportingMta}`;
  const returned = Object.entries(mail.headers)
    .filter(([name]) => ['from', 'to', 'subject', 'message-id', 'date', 'x-hermod-message-id'].includes(name))
    .map(([name, value]) => `${name}: ${value.replace(/[^\x20-\x7e]/g, '?')}`);
  return [
    `From: MAILER-DAEMON@${reportingMta} (Mail Delivery System)`,
    `To: ${mail.from}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    `Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=us-ascii',
    '',
    `This is the mail system at host ${reportingMta}. Your message could not be delivered to ${recipient}.`,
    '',
    `--${boundary}`,
    'Content-Type: message/delivery-status',
    '',
    `Reporting-MTA: dns; ${reportingMta}`,
    `X-Postfix-Sender: rfc822; ${mail.from}`,
    '',
    `Final-Recipient: rfc822; ${recipient}`,
    `Original-Recipient: rfc822;${recipient}`,
    'Action: failed',
    'Status: 5.1.1',
    'Remote-MTA: dns; mx.example.org',
    `Diagnostic-Code: smtp; 550 5.1.1 <${recipient}>: Recipient address rejected:`,
    '    User unknown in virtual mailbox table',
    '',
    `--${boundary}`,
    'Content-Type: text/rfc822-headers',
    '',
    ...returned,
    '',
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

/** Sends the bounce of `recipient` to the mail's envelope sender, from the null sender `<>` as RFC 5321 §4.5.5 requires. */
export async function sendBounce(mail: ReturnedMail, recipient: string, target: BounceTarget): Promise<void> {
  const transport = createTransport({ host: target.host, port: target.port, secure: false, ignoreTLS: true, connectionTimeout: 5000 });
  try {
    await transport.sendMail({ envelope: { from: '', to: [mail.from] }, raw: bounceReport(mail, recipient, 'sink.localhost') });
  } finally {
    transport.close();
  }
}
