import { describe, expect, it } from 'vitest';
import { channelPoolTestKit } from '../channel-pool-test-kit';
import { emailJob, smtpTestKit } from '../carriers/smtp/smtp-test-kit';
import { startEmailWorkerPool } from './email-worker-pool';

const smtp = smtpTestKit();
const kit = channelPoolTestKit();

/** A pool on an in-process bus and state, sending to a fresh sink. */
async function emailPool() {
  const sink = await smtp.sink();
  const pool = await kit.pool('email', (deps) => startEmailWorkerPool({ config: smtp.config(sink.port), dataDir: '', ...deps }));
  return { sink, ...pool };
}

describe('e-mail worker pool', () => {
  it('takes a job from the email topic, sends it and reports it submitted, then received', async () => {
    const { sink, publish, statusesOnce } = await emailPool();
    const job = emailJob({ im: { type: 'text', subject: 'Nau mai — Добро пожаловать 👋🏽' } });

    await publish([job]);

    const updates = await statusesOnce(job.id, 'received', 5000);
    expect(updates.map((u) => u.status)).toEqual(['sent', 'submitted', 'received']);
    const carrierId = sink.mails[0]!.messageId;
    expect(updates.slice(1)).toEqual([
      expect.objectContaining({ status: 'submitted', channel: 'email', carrierId }),
      expect.objectContaining({ status: 'received', channel: 'email', carrierId, errorCode: '' }),
    ]);
    expect(sink.mails[0]).toMatchObject({ subject: 'Nau mai — Добро пожаловать 👋🏽', to: [job.destination] });
  });

  it('reports a job to a mailbox the server refuses as rejected, and sends nothing', async () => {
    const { sink, publish, statusesOnce } = await emailPool();
    const job = emailJob({ destination: 'bounce@example.com' });

    await publish([job]);

    const updates = await statusesOnce(job.id, undefined, 5000);
    expect(updates).toEqual([expect.objectContaining({ status: 'rejected', channel: 'email', errorCode: 'carrier_rejected' })]);
    expect(updates[0]!.detail).toContain('5.1.1');
    expect(sink.mails).toEqual([]);
  });
});
