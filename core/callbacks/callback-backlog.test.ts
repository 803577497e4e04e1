import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { callbacksAwaitingRetry } from '../../lib/metrics';
import { createCallbackBacklog } from './callback-backlog';
import type { CallbackJob } from './callback-job';

const awaiting = async (application: string): Promise<number | undefined> =>
  (await callbacksAwaitingRetry.get()).values.find((v) => v.labels.application === application)?.value;

const job = (applicationId: string, createdAt: number): CallbackJob => ({
  eventId: randomUUID(),
  applicationId,
  kind: 'status',
  messageId: randomUUID(),
  body: { detail: 'Привет' },
  createdAt,
  attempt: 0,
  notBefore: 0,
});

describe('callback backlog', () => {
  it('counts each waiting callback once per application until it is finished', async () => {
    const [acme, globex] = [`acme-${randomUUID()}`, `globex-${randomUUID()}`];
    const backlog = createCallbackBacklog(60_000);
    const a1 = job(acme, Date.now());
    const a2 = job(acme, Date.now());
    backlog.waiting(a1);
    backlog.waiting(a1); // retried again: still one callback
    backlog.waiting(a2);
    backlog.waiting(job(globex, Date.now()));
    expect(await awaiting(acme)).toBe(2);
    expect(await awaiting(globex)).toBe(1);

    backlog.done(a1);
    backlog.done(a1);
    expect(await awaiting(acme)).toBe(1);
  });

  it('forgets a callback once its retry window is over, in case another process finished it', async () => {
    const app = `initech-${randomUUID()}`;
    let now = 1_000_000;
    const backlog = createCallbackBacklog(60_000, () => now);
    backlog.waiting(job(app, now));
    expect(await awaiting(app)).toBe(1);
    now += 60_000 + 60_000 + 10_001;
    backlog.waiting(job(app, now));
    expect(await awaiting(app)).toBe(1);
  });
});
