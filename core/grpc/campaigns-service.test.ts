import { describe, expect, it } from 'vitest';
import { MALLOC_DEFAULTS } from '../../lib/malloc-env';
import { Metadata } from '@grpc/grpc-js';
import { HermodError } from '../../lib/errors';
import type { HotState } from '../ports/state';
import { campaignsService, REPORT_BYTES, type CampaignServices } from './campaigns-service';

describe('the campaign report on the gRPC stream', () => {
  it('goes in messages whose every copy stays under the mmap threshold hermod start gives glibc, so none is a fresh mapping', () => {
    const threshold = Number(MALLOC_DEFAULTS.MALLOC_MMAP_THRESHOLD_);
    // The protobuf field's tag and length (at most 6 bytes), then grpc-js's 5-byte frame header.
    expect(REPORT_BYTES + 6 + 5).toBeLessThan(threshold);
  });
});

describe('the health core gives the Campaign Manager healthz', () => {
  /** Core's answer to Health with this history and hot state, and how long it took. */
  const health = async (history: Pick<CampaignServices['history'], 'ping' | 'answeredAt'>, state: Pick<HotState, 'getStatus'>) => {
    const services = { history, state } as unknown as CampaignServices;
    const started = Date.now();
    const answer = await new Promise<{ ok: boolean; detail: string }>((resolve, reject) =>
      (campaignsService(services).health as (call: unknown, cb: (err: unknown, res: { ok: boolean; detail: string }) => void) => void)(
        { request: {}, metadata: new Metadata() },
        (err, res) => (err ? reject(err) : resolve(res)),
      ),
    );
    return { ...answer, ms: Date.now() - started };
  };
  const history = { ping: async () => undefined };

  it('is ok while history and hot state answer', async () => {
    expect(await health(history, { getStatus: async () => undefined })).toMatchObject({ ok: true });
  });

  it('fails while hot state (Redis) is out of reach, saying so, within two seconds however long Redis takes to fail', async () => {
    const down = await health(history, {
      getStatus: () => Promise.reject(new HermodError('unavailable', 'getting a status: connect ECONNREFUSED 127.0.0.1:6380')),
    });
    expect(down).toMatchObject({ ok: false, detail: expect.stringContaining('hot state unavailable: getting a status: connect ECONNREFUSED') });
    const silent = await health(history, { getStatus: () => new Promise(() => undefined) });
    expect(silent).toMatchObject({ ok: false, detail: expect.stringContaining('hot state did not answer within 2 s') });
    expect(silent.ms).toBeLessThan(3000);
  });

  it('fails while history is out of reach, as before', async () => {
    const down = await health({ ping: () => Promise.reject(new Error('chDB is closed')) }, { getStatus: async () => undefined });
    expect(down).toMatchObject({ ok: false, detail: expect.stringContaining('history unavailable: chDB is closed') });
  });

  it('stays ok while history is busy, not down: a ping stuck behind a large import counts as an answer when history answered another call within 10 s (bulk sender trial: 500 during a million-member import)', async () => {
    const busy = { ping: () => new Promise<void>(() => undefined), answeredAt: () => Date.now() - 3_000 };
    expect(await health(busy, { getStatus: async () => undefined })).toMatchObject({ ok: true });
    const hung = { ping: () => new Promise<void>(() => undefined), answeredAt: () => Date.now() - 11_000 };
    expect(await health(hung, { getStatus: async () => undefined })).toMatchObject({
      ok: false,
      detail: expect.stringContaining('history did not answer within 2 s'),
    });
    // An error is an error, however recent the last answer.
    const failing = { ping: () => Promise.reject(new Error('chDB is closed')), answeredAt: () => Date.now() };
    expect(await health(failing, { getStatus: async () => undefined })).toMatchObject({ ok: false });
  });
});
