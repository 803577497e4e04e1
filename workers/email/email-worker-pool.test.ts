import { describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../core/adapters/memory-bus';
import { createMemoryState } from '../../core/adapters/memory-state';
import { decodeStatus, encodeJob, type OutboundJob, type StatusUpdate } from '../../core/messages/bus-payloads';
import { topicName } from '../../core/ports/bus';
import { emailJob, eventually, quietLog, smtpTestKit } from '../carriers/smtp/smtp-test-kit';
import { startEmailWorkerPool } from './email-worker-pool';

const kit = smtpTestKit();

/** A pool on an in-process bus and state, sending to a fresh sink; collects every status update. */
async function emailPool() {
  const sink = await kit.sink();
  const bus = createMemoryBus();
  const state = createMemoryState();
  const pool = await startEmailWorkerPool({ config: kit.config(sink.port), bus, state, log: quietLog });
  kit.defer(async () => {
    await pool.stop();
    await bus.close();
    await state.close();
  });
  const updates: StatusUpdate[] = [];
  await bus.subscribe(topicName('status'), async (records) => void updates.push(...records.map((r) => decodeStatus(r.value))), { group: 'test-status' });
  return {
    sink,
    publish: (jobs: OutboundJob[]) => bus.publish(topicName('email'), jobs.map((j) => ({ key: j.id, value: encodeJob(j) }))),
    statusesOf: (id: string) => updates.filter((u) => u.id === id),
  };
}

describe('e-mail worker pool', () => {
  it('takes a job from the email topic, sends it and reports it submitted, then received', async () => {
    const { sink, publish, statusesOf } = await emailPool();
    const job = emailJob({ im: { type: 'text', subject: 'Welcome' } });

    await publish([job]);

    const updates = await eventually(() => (statusesOf(job.id).some((u) => u.status === 'received') ? statusesOf(job.id) : undefined), 5000);
    expect(updates.map((u) => u.status)).toEqual(['sent', 'submitted', 'received']);
    const carrierId = sink.mails[0]!.messageId;
    expect(updates.slice(1)).toEqual([
      expect.objectContaining({ status: 'submitted', channel: 'email', carrierId }),
      expect.objectContaining({ status: 'received', channel: 'email', carrierId, errorCode: '' }),
    ]);
    expect(sink.mails[0]).toMatchObject({ subject: 'Welcome', to: [job.destination] });
  });

  it('reports a job to a mailbox the server refuses as rejected, and sends nothing', async () => {
    const { sink, publish, statusesOf } = await emailPool();
    const job = emailJob({ destination: 'bounce@example.com' });

    await publish([job]);

    const updates = await eventually(() => (statusesOf(job.id).length > 0 ? statusesOf(job.id) : undefined), 5000);
    expect(updates).toEqual([expect.objectContaining({ status: 'rejected', channel: 'email', errorCode: 'carrier_rejected' })]);
    expect(updates[0]!.detail).toContain('5.1.1');
    expect(sink.mails).toEqual([]);
  });
});
