import { once } from 'node:events';
import { Server, ServerCredentials, credentials, type ServerWritableStream, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { CampaignReportRequest, ReportChunk } from '../proto/gen/hermod/v1/campaigns';
import { CampaignsServiceWithReportWire } from '../proto/report-chunk-wire';
import { eventually } from '../test/support/eventually';
import { createCampaignsClient, type CampaignsClient } from './campaigns-client';

const CHUNK = Buffer.alloc(64 * 1024, ',{"list_name":"Hui ā-tau 👋🏽","mobile":"+64211234567","status":"received"}');
const TOTAL = 8 * 1024 * 1024;

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A core that streams TOTAL bytes of report as fast as the stream takes them, counting what it has handed over. */
async function startReportServer(): Promise<{ port: number; written: () => number }> {
  let written = 0;
  const server = new Server();
  server.addService(CampaignsServiceWithReportWire, {
    streamCampaignReport: async (call: ServerWritableStream<CampaignReportRequest, ReportChunk>) => {
      while (written < TOTAL && !call.cancelled) {
        written += CHUNK.length;
        if (!call.write({ jsonRows: CHUNK })) await once(call, 'drain');
      }
      call.end();
    },
  } as unknown as UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanup.push(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  return { port, written: () => written };
}

describe('the gateway’s campaigns channel to core', () => {
  it('lets core send a report megabytes ahead of a gateway still busy with the first chunk, not HTTP/2’s 64 KB', async () => {
    const core = await startReportServer();
    const client: CampaignsClient = createCampaignsClient(`127.0.0.1:${core.port}`, credentials.createInsecure());
    cleanup.push(() => client.close());
    const chunks = client.streamCampaignReport('app-1', 7)[Symbol.asyncIterator]();
    expect((await chunks.next()).value?.jsonRows.length).toBe(CHUNK.length);
    // The gateway writes that chunk to a slow client: meanwhile core keeps going until the window is full
    // (with HTTP/2's default window it stops at 2 MB: what grpc-js and node's http2 buffer, and 64 KB).
    await eventually(() => core.written() > 3 * 1024 * 1024, 5000).catch(() => undefined);
    expect(core.written()).toBeGreaterThan(3 * 1024 * 1024);

    let received = CHUNK.length;
    for (let step = await chunks.next(); !step.done; step = await chunks.next()) received += step.value.jsonRows.length;
    expect(received).toBe(TOTAL);
  });
});

describe("the gateway's health call to core", () => {
  it('gives up within 3 s on a core that takes the call and never answers, so healthz answers a probe in time', async () => {
    const server = new Server();
    server.addService(CampaignsServiceWithReportWire, { health: () => undefined } as unknown as UntypedServiceImplementation);
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    cleanup.push(() => server.forceShutdown());
    const client = createCampaignsClient(`127.0.0.1:${port}`, credentials.createInsecure());
    cleanup.push(() => client.close());
    const started = Date.now();
    await expect(client.health()).rejects.toBeDefined();
    expect(Date.now() - started).toBeLessThan(4000);
  }, 20_000);
});
