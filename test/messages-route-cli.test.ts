import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Server } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../bin/cli/admin-cli';
import { createChdbHistory } from '../core/adapters/chdb-history';
import { createMemoryState } from '../core/adapters/memory-state';
import { bindServer, type BoundServer } from '../core/grpc/core-grpc-server';
import { messageRoutesService } from '../core/grpc/message-routes-service';
import { createMessageReader } from '../core/messages/message-reader';
import { createRecentMessages } from '../core/messages/recent-messages';
import { imAttemptId, newImMessageId } from '../core/im/im-ids';
import { createStatusRecorder, type StatusChange } from '../core/messages/status-recorder';
import type { History } from '../core/ports/history';
import type { MessageRecord } from '../core/ports/message-history';
import { resolveConfig } from '../lib/config';
import { MessageRoutesService } from '../proto/gen/hermod/v1/message_routes';

const LONG = 'Kia ora, e hoa mā — tēnā koe i tēnei rā 👋🏽 '.repeat(6);

/**
 * `hermod messages route` against core's MessageRoutes service on a real gRPC server, over a real chDB history whose
 * events the status recorder wrote as core writes a worker's reports.
 */
describe('hermod messages route', () => {
  let dataDir: string;
  let history: History;
  let bound: BoundServer;
  let server: Server;
  const state = createMemoryState();
  const applicationId = randomUUID();
  let nextNumericId = 7_000_001;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-messages-route-'));
    history = await createChdbHistory({ dataDir });
    await history.upsertApplication({
      id: applicationId,
      name: 'kōrero',
      passwordHash: '',
      apiKeyHash: '',
      statusCallbackUrl: '',
      replyCallbackUrl: '',
      callbackSecret: 'hmd_test',
      previousCallbackSecret: '',
      previousCallbackSecretUntil: 0,
      imStatusCallbackUrl: '',
      imDefaultAttempts: '',
      sourceAddresses: [],
      imRateLimit: -1,
      quotaMessages: 0,
      quotaPeriod: '',
      updatedAt: Date.now(),
    });
    server = new Server();
    const reader = createMessageReader({ history, state, recent: createRecentMessages() });
    server.addService(MessageRoutesService, messageRoutesService({ applications: history, reader, history }));
    bound = await bindServer(server, '127.0.0.1:0');
  }, 60_000);

  afterAll(async () => {
    server?.forceShutdown();
    await bound?.close();
    await history?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The CLI's output lines, split into cells. */
  const route = async (id: string): Promise<string[][]> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdminCommand(
      resolveConfig({ HERMOD_CORE_ADDRESS: `127.0.0.1:${bound.port}` }),
      ['messages', 'route', 'kōrero', id],
      (l) => void out.push(l),
      (l) => void err.push(l),
    );
    expect([code, err]).toEqual([0, []]);
    return out.map((line) => line.split('\t'));
  };

  /** An SMS stored as intake stores it, then the statuses a worker reported, recorded as core records them. */
  const sent = async (channel: string, changes: Omit<StatusChange, 'messageId' | 'applicationId' | 'channel'>[], overrides: Partial<MessageRecord> = {}) => {
    const m: MessageRecord = {
      id: randomUUID(),
      numericId: nextNumericId++,
      applicationId,
      channel,
      direction: 'MT',
      destination: '+64211234567',
      source: '',
      content: LONG,
      reference: '',
      messageClass: '',
      mask: '',
      smsClass: 0,
      scheduledAt: 0,
      integrationId: '',
      via: 'sms_v2',
      segments: 4,
      acceptedAt: changes[0]!.at - 1,
      replyTo: '',
      ...overrides,
    };
    await history.insertMessages([m], [{ messageId: m.id, applicationId, status: 'accepted', at: m.acceptedAt, detail: '', carrierId: '', errorCode: '' }]);
    const recorder = createStatusRecorder({ history, state });
    for (const c of changes) await recorder.record([{ ...c, messageId: m.id, applicationId: '', channel }]);
    return m;
  };

  it('shows a long SMS refused after its carrier took some parts with the route they went by and their carrier ids', async () => {
    const at = Date.UTC(2026, 11, 2, 10, 0, 0);
    const m = await sent('sms', [
      { status: 'queued', at },
      { status: 'sent', at: at + 10 },
      {
        status: 'rejected',
        at: at + 20,
        errorCode: 'rejected',
        detail: 'part 2 of 4 refused: ESME_RINVDSTADR (the carrier took 2 of its 4 parts: spark:ā1, spark:ā3)',
        partCarrierIds: ['spark:ā1', 'spark:ā3'],
        route: 'route nz-mobile → carrier spark',
      },
    ]);
    expect(await route(m.id)).toEqual([
      ['id', 'status', 'route', 'carrier_id', 'submitted_at'],
      [m.id, 'rejected', 'route nz-mobile → carrier spark', '2 of 4 parts taken: spark:ā1,spark:ā3', new Date(at + 20).toISOString()],
    ]);
  });

  it('names a message by the Gateway v1 number the operator gave, not by hermod’s own UUID', async () => {
    const at = Date.UTC(2026, 11, 2, 11, 0, 0);
    const m = await sent(
      'sms',
      [
        { status: 'queued', at },
        { status: 'submitted', at: at + 10, carrierId: 'one-nz:18f3a9c2', detail: 'route nz-mobile → carrier one-nz (failover from spark)' },
      ],
      { via: 'gateway_v1', content: 'Kia ora 你好 👋', segments: 1 },
    );
    expect((await route(String(m.numericId)))[1]).toEqual([
      String(m.numericId),
      'submitted',
      'route nz-mobile → carrier one-nz (failover from spark)',
      'one-nz:18f3a9c2',
      new Date(at + 10).toISOString(),
    ]);
  });

  it('shows an Intelligent Messaging message by the attempt that ended it, with its outcome: the SMS it fell back to, refused, not the WhatsApp before', async () => {
    const at = Date.UTC(2026, 11, 2, 12, 0, 0);
    const im = await sent('im', [{ status: 'queued', at }], { id: newImMessageId(), via: 'im_v1', content: 'Kia ora 👋 — 你好', segments: 1 });
    const attempt = (k: number, channel: string) => ({ id: imAttemptId(im.id, k), via: 'im_attempt', content: im.content, replyTo: im.id, channel });
    await sent('wab', [{ status: 'submitted', at: at + 10, carrierId: 'wamid.HBgLNjQyMTEyMzQ1Njc' }], attempt(0, 'wab'));
    await sent(
      'sms',
      [
        { status: 'queued', at: at + 60_000 },
        { status: 'rejected', at: at + 60_010, errorCode: 'rejected', detail: 'refused by the carrier: ESME_RINVDSTADR' },
      ],
      attempt(1, 'sms'),
    );
    await createStatusRecorder({ history, state }).record([{ messageId: im.id, applicationId: '', channel: 'im', status: 'rejected', at: at + 60_020 }]);
    expect((await route(im.id))[1]).toEqual([im.id, 'rejected', 'attempt 2 (sms, rejected): not submitted', '-', '-']);
  });
});
