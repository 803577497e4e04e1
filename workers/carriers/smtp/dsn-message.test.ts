import { describe, expect, it } from 'vitest';
import { DeliveryStatusError } from './delivery-status';
import { postfixBounce, RFC3464_DELAYED, RFC3464_MULTI_RECIPIENT, RFC3464_SIMPLE } from './dsn-fixtures';
import { readDsnMessage } from './dsn-message';

describe('reading a delivery status notification', () => {
  it('reads RFC 3464’s simple DSN: one recipient failed, with the MTA’s diagnostic', () => {
    const { status } = readDsnMessage(RFC3464_SIMPLE);
    expect(status).toEqual({
      reportingMta: 'cs.utk.edu',
      originalEnvelopeId: '',
      recipients: [
        {
          finalRecipient: 'louisl@larry.slip.umd.edu',
          originalRecipient: 'louisl@larry.slip.umd.edu',
          action: 'failed',
          status: '4.0.0',
          diagnosticCode: 'smtp; 426 connection timed out',
          remoteMta: '',
        },
      ],
    });
  });

  it('reads RFC 3464’s multi-recipient DSN: folded diagnostics unfolded, comments after the status code dropped', () => {
    const { status } = readDsnMessage(Buffer.from(RFC3464_MULTI_RECIPIENT));
    expect(status.recipients.map((r) => [r.finalRecipient, r.action, r.status, r.diagnosticCode, r.remoteMta])).toEqual([
      ['arathib@vnet.ibm.com', 'failed', '5.0.0', "smtp;  550 'arathib@vnet.IBM.COM' is not a registered gateway user", 'vnet.ibm.com'],
      ['johnh@hpnjld.njd.hp.com', 'delayed', '4.0.0', '', ''],
      ['wsnell@sdcc13.ucsd.edu', 'failed', '5.0.0', 'smtp; 550 user unknown', 'sdcc13.ucsd.edu'],
    ]);
  });

  it('reads RFC 3464’s delayed DSN as a delay, fields in any order', () => {
    const { status } = readDsnMessage(RFC3464_DELAYED);
    expect(status.recipients).toEqual([expect.objectContaining({ finalRecipient: 'thomas@de-montfort.ac.uk', action: 'delayed', status: '4.0.0' })]);
  });

  it('reads a Postfix bounce with its extension fields, and the returned headers that name the hermod message', () => {
    const dsn = readDsnMessage(postfixBounce({ to: 'tane@example.org', verp: 'bounces+msg-1@example.com', hermodId: 'msg-1' }));
    expect(dsn.status.reportingMta).toBe('mail.example.net');
    expect(dsn.status.recipients).toEqual([
      {
        finalRecipient: 'tane@example.org',
        originalRecipient: 'tane@example.org',
        action: 'failed',
        status: '5.1.1',
        diagnosticCode: 'smtp; 550 5.1.1 <tane@example.org>: Recipient address rejected: User unknown in virtual mailbox table',
        remoteMta: 'mx.example.org',
      },
    ]);
    expect(dsn.returnedHeaders['x-hermod-message-id']).toBe('msg-1');
  });

  it('reads a status part sent base64-encoded', () => {
    const fields = 'Reporting-MTA: dns; mx.example.net\r\n\r\nFinal-Recipient: rfc822; 田中@example.jp\r\nAction: failed\r\nStatus: 5.1.1\r\n';
    const raw = [
      'Content-Type: multipart/report; report-type="delivery-status"; boundary=b1',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      'Kia ora, e hoa mā — your message bounced 👋🏽',
      '--b1',
      'Content-Type: message/global-delivery-status',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from(fields).toString('base64'),
      '--b1--',
      '',
    ].join('\r\n');
    expect(readDsnMessage(raw).status.recipients[0]).toMatchObject({ finalRecipient: '田中@example.jp', status: '5.1.1' });
  });

  it('refuses an autoresponder and a report without a status part, saying what is missing', () => {
    expect(() => readDsnMessage('Subject: Out of office\r\n\r\nI am away until Monday.\r\n')).toThrow(DeliveryStatusError);
    expect(() => readDsnMessage('Content-Type: multipart/report; report-type=delivery-status; boundary=x\r\n\r\n--x\r\n\r\ntext\r\n--x--\r\n')).toThrow(
      /no message\/delivery-status part/,
    );
  });

  it('refuses a status without Action, or with a Status that is not an RFC 3463 code', () => {
    const report = (fields: string) =>
      `Content-Type: multipart/report; report-type=delivery-status; boundary=x\r\n\r\n--x\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; a.example\r\n\r\n${fields}\r\n--x--\r\n`;
    expect(() => readDsnMessage(report('Final-Recipient: rfc822; a@example.com\r\nStatus: 5.1.1'))).toThrow(/Action/);
    expect(() => readDsnMessage(report('Final-Recipient: rfc822; a@example.com\r\nAction: failed\r\nStatus: 550'))).toThrow(/RFC 3463/);
  });
});
