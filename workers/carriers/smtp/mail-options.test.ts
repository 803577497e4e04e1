import { describe, expect, it } from 'vitest';
import { emailJob } from './smtp-test-kit';
import { mailOptions } from './mail-options';

describe('the e-mail of a job', () => {
  it('addresses a mailbox at an internationalised domain by its ASCII form, in the header and the envelope, which every relay takes, SMTPUTF8 or not', () => {
    expect(mailOptions(emailJob({ destination: 'ana@whānau.nz' }), 'noreply@hermod.example')).toMatchObject({ to: 'ana@xn--whnau-gwa.nz' });
    expect(
      mailOptions(emailJob({ destination: 'info@例子.广告' }), 'noreply@hermod.example', { domain: 'bounces.hermod.example', secret: 'a-secret-of-sixteen+' }),
    ).toMatchObject({
      to: 'info@xn--fsqu00a.xn--4rr70v',
      envelope: { to: 'info@xn--fsqu00a.xn--4rr70v' },
    });
  });

  it('keeps a local part in another script as it is (it needs a relay with SMTPUTF8), and an ASCII address unchanged', () => {
    expect(mailOptions(emailJob({ destination: 'kōrero@whānau.nz' }), 'noreply@hermod.example').to).toBe('kōrero@xn--whnau-gwa.nz');
    expect(mailOptions(emailJob({ destination: 'Ana.Smith+news@Example.COM' }), 'noreply@hermod.example').to).toBe('Ana.Smith+news@example.com');
  });

  it("names the mail by the job's id at the sender's domain, or the bounce domain, never at a domain that is no dot-atom", () => {
    const job = emailJob({ source: 'ana@whānau.nz' });
    expect(mailOptions(job, 'noreply@hermod.example').messageId).toBe(`<${job.id}@xn--whnau-gwa.nz>`);
    expect(mailOptions(job, 'noreply@hermod.example', { domain: 'bounces.hermod.example', secret: 'a-secret-of-sixteen+' }).messageId).toBe(
      `<${job.id}@bounces.hermod.example>`,
    );
    for (const source of ['ana@example.com.', 'ana@a..b'])
      expect(mailOptions(emailJob({ id: job.id, source }), 'Hermod <noreply@hermod.example>').messageId).toBe(`<${job.id}@hermod.example>`);
  });
});
