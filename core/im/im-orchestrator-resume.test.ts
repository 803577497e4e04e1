import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log';
import { createChdbHistory } from '../adapters/chdb-history';
import { createMemoryBus } from '../adapters/memory-bus';
import { createMemoryState } from '../adapters/memory-state';
import { createNumericIds } from '../messages/numeric-ids';
import { createRecentMessages } from '../messages/recent-messages';
import { createStatusRecorder } from '../messages/status-recorder';
import type { MessageRecord } from '../ports/message-history';
import { imAttemptId } from './im-ids';
import { startImOrchestrator } from './im-orchestrator';
import type { ImPlan } from './im-plan';
import type { ImStatusNotice } from './im-status-notice';

const log = createLogger({ test: 'im-orchestrator-resume' });
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

const record = (id: string, channel: string, content: string, at: number): MessageRecord => ({
  id,
  numericId: 0,
  applicationId: 'app-1',
  channel,
  direction: 'MT',
  destination: '+64211234567',
  source: '',
  content,
  reference: 'Pānui 🌿',
  messageClass: '',
  mask: '',
  smsClass: 0,
  scheduledAt: 0,
  integrationId: '',
  via: 'im_v1',
  segments: 1,
  acceptedAt: at,
  replyTo: '',
});

const plan = (attempts: ImPlan['attempts']): ImPlan => ({
  type: 'text',
  text: 'Kia ora, e hoa mā — 你好 👋🏽',
  destination: { mobile: '+64211234567', email: '', whatsappId: '' },
  attempts,
  reference: 'Pānui 🌿',
  schedulerPipe: '',
  subject: '',
});

/** History with an IM message whose first attempt was submitted, then `recorded` (as a carrier's report) and not told: core died. */
async function crashedAfterRecording(attempts: ImPlan['attempts'], recorded: { status: 'received' | 'failed'; detail?: string }) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-im-resume-'));
  cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const history = await createChdbHistory({ dataDir });
  cleanup.push(() => history.close());
  const state = createMemoryState();
  const recorder = createStatusRecorder({ history, state });
  const at = Date.now() - 5_000;
  const id = '5e1b1c2a-7d3c-4a55-9d1e-00000000a001';
  const attempt = imAttemptId(id, 0);
  const content = plan(attempts);
  const event = (messageId: string, status: 'accepted' | 'submitted') => ({
    messageId,
    applicationId: 'app-1',
    status,
    at,
    detail: '',
    carrierId: '',
    errorCode: '',
  });
  await history.insertMessages(
    [record(id, 'im', JSON.stringify(content), at), record(attempt, 'sms', content.text, at)],
    [event(id, 'accepted'), event(attempt, 'accepted')],
  );
  await history.appendEvents([event(attempt, 'submitted')]);
  await recorder.record([{ messageId: attempt, applicationId: 'app-1', channel: 'sms', status: recorded.status, at: at + 1_000, detail: recorded.detail }]);
  await recorder.drain();

  const told: ImStatusNotice[] = [];
  const orchestrator = await startImOrchestrator({
    bus: createMemoryBus(),
    state,
    history,
    im: history.im,
    recorder,
    numericIds: createNumericIds(0),
    notices: { imStatus: (n) => void told.push(n) },
    recent: createRecentMessages(),
    log,
    defaultTimeoutSeconds: 60,
  });
  cleanup.push(() => orchestrator.stop());
  return told;
}

describe('an IM message resumed after a crash', () => {
  it('tells a failed attempt with the reason its carrier gave, then takes the next one', async () => {
    const told = await crashedAfterRecording(
      [
        { channel: 'sms', event: '' },
        { channel: 'sms', event: '' },
      ],
      { status: 'failed', detail: 'absent subscriber — kāore i te wātea' },
    );
    for (let i = 0; i < 200 && !told.some((n) => n.attempt?.number === 2); i++) await new Promise((r) => setTimeout(r, 25));
    expect(told.map((n) => [n.attempt?.number ?? 'message', n.status, n.reason])).toEqual([
      [1, 'failed', 'absent subscriber — kāore i te wātea'],
      [2, 'accepted', undefined],
    ]);
  });

  it('tells the outcome its attempt reached and the crash kept from being told, before the message’s own', async () => {
    const told = await crashedAfterRecording([{ channel: 'sms', event: '' }], { status: 'received' });
    for (let i = 0; i < 200 && !told.some((n) => !n.attempt && n.status === 'received'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(told.map((n) => [n.attempt?.number ?? 'message', n.status])).toEqual([
      [1, 'received'],
      ['message', 'received'],
    ]);
  });
});
