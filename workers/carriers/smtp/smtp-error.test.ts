import { describe, expect, it } from 'vitest';
import { HermodError } from '../../../lib/errors';
import { smtpError } from './smtp-error';

const failure = (fields: Record<string, unknown>): Error => Object.assign(new Error(String(fields.message ?? 'failed')), fields);

describe('smtpError', () => {
  it.each([
    ['a 550 reply to RCPT TO', { code: 'EENVELOPE', responseCode: 550, permanent: true, response: '550 5.1.1 mailbox unavailable' }],
    ['a 552 reply to DATA', { code: 'EMESSAGE', responseCode: 552, permanent: true, response: '552 5.3.4 message too big' }],
    ['an address nodemailer refuses before asking the server', { code: 'EENVELOPE', message: 'Invalid recipient "a b"' }],
    ['a 5xx reply from an older nodemailer without the permanent flag', { code: 'EENVELOPE', responseCode: 554, response: '554 no' }],
  ])('rejects for good on %s', (_, fields) => {
    expect(smtpError(failure(fields))).toMatchObject({ code: 'carrier_rejected', retryable: false });
  });

  it.each([
    ['a 451 reply', { code: 'EENVELOPE', responseCode: 451, permanent: false, response: '451 4.3.0 try again later' }],
    ['a 421 reply', { code: 'ECONNECTION', responseCode: 421, permanent: false, response: '421 shutting down' }],
    ['a 503 reply (the session, not the message)', { code: 'EENVELOPE', responseCode: 503, permanent: false, response: '503 bad sequence' }],
    ['refused credentials, even with a 5xx', { code: 'EAUTH', responseCode: 535, permanent: true, response: '535 auth failed' }],
    ['a refused connection', { code: 'ESOCKET', originalCode: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:25' }],
    ['a timeout', { code: 'ETIMEDOUT', message: 'Greeting never received' }],
    ['a failure nodemailer does not name', { message: 'something odd' }],
  ])('fails transiently on %s', (_, fields) => {
    expect(smtpError(failure(fields))).toMatchObject({ code: 'carrier_transient', retryable: true });
  });

  it('tells the server reply in the message and keeps the original as the cause', () => {
    const original = failure({ code: 'EENVELOPE', responseCode: 550, permanent: true, response: '550 5.1.1 mailbox unavailable' });
    const err = smtpError(original);
    expect(err.message).toBe('550 5.1.1 mailbox unavailable');
    expect(err.cause).toBe(original);
  });

  it('passes a HermodError through unchanged', () => {
    const err = new HermodError('carrier_transient', 'already mapped');
    expect(smtpError(err)).toBe(err);
  });
});
