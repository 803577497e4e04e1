import { credentials, Server, ServerCredentials } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { MessagingClient, MessagingService, type OutboundMessage, type SendResult } from '../proto/gen/hermod/v1/messages';
import { createSendStreams, type SendStreams } from '../core/grpc/send-streams';
import { HermodError } from '../lib/errors';
import { createSendStream, type SendStream } from './send-stream';

const message = (destination: string, content: string): OutboundMessage => ({
  applicationId: 'app-Ōtautahi',
  channel: 'sms',
  destination,
  content,
  source: '',
  reference: '',
  messageClass: '',
  mask: '',
  smsClass: 0,
  scheduled: undefined,
  integrationId: '',
  interface: 'sms_v2',
  dedupKey: '',
});

const accepted = (id: string): SendResult => ({ outcome: { $case: 'accepted', value: { id, status: 'accepted', numericId: 0, replayed: false } } });

type Send = (messages: OutboundMessage[]) => Promise<SendResult[]>;

interface Core {
  server: Server;
  streams: SendStreams;
  opened: () => number;
  stored: OutboundMessage[];
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** Core's end of the stream on 127.0.0.1:0 over real gRPC, storing what `send` accepts. */
async function startCore(send: Send): Promise<Core & { address: string }> {
  const stored: OutboundMessage[] = [];
  let opened = 0;
  const streams = createSendStreams(async (messages) => {
    const results = await send(messages);
    stored.push(...messages);
    return results;
  });
  const server = new Server();
  server.addService(MessagingService, {
    sendMessageStream: (call: Parameters<SendStreams['handle']>[0]) => {
      opened += 1;
      streams.handle(call);
    },
  } as never);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanup.push(() => void server.forceShutdown());
  return { server, streams, opened: () => opened, stored, address: `127.0.0.1:${port}` };
}

function connect(address: string, timeoutMs?: number): SendStream {
  const client = new MessagingClient(address, credentials.createInsecure());
  const stream = createSendStream(client, timeoutMs);
  cleanup.push(() => {
    stream.close();
    client.close();
  });
  return stream;
}

const failure = (p: Promise<unknown>): Promise<HermodError> =>
  p.then(
    () => {
      throw new Error('expected the batch to fail');
    },
    (err: unknown) => err as HermodError,
  );

describe('the gateway ↔ core send stream', () => {
  it('answers each batch with its own results over one stream, whatever order core finishes them in', async () => {
    // The first batch is the slowest: its answer comes back last.
    const core = await startCore(async (messages) => {
      await new Promise((r) => setTimeout(r, messages.length === 1 ? 60 : 5));
      return messages.map((m) => accepted(`id ${m.content}`));
    });
    const stream = connect(core.address);
    const answers = await Promise.all([
      stream.send([message('+6421000001', 'Kia ora 👋🏽')]),
      stream.send([message('+6421000002', 'tēnā koe'), message('+6421000003', '测试')]),
      stream.send([message('+6421000004', 'ka kite anō'), message('+6421000005', 'mā te wā')]),
    ]);
    expect(answers.map((a) => a.map((r) => (r.outcome?.$case === 'accepted' ? r.outcome.value.id : '?')))).toEqual([
      ['id Kia ora 👋🏽'],
      ['id tēnā koe', 'id 测试'],
      ['id ka kite anō', 'id mā te wā'],
    ]);
    expect(core.opened()).toBe(1);
  });

  it("fails each request of a batch that core refuses as a whole with core's own code and message", async () => {
    const core = await startCore(async () => {
      throw new HermodError('unauthorized', 'application is required — kāore he tono');
    });
    const err = await failure(connect(core.address).send([message('+6421000001', 'Kia ora')]));
    expect(err).toBeInstanceOf(HermodError);
    expect(err.code).toBe('unauthorized');
    expect(err.message).toBe('application is required — kāore he tono');
  });

  it('answers the batches core took before it stops, refuses later ones as unavailable without storing them, and lets the server shut down', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const core = await startCore(async (messages) => {
      await held;
      return messages.map((m) => accepted(`id ${m.destination}`));
    });
    const stream = connect(core.address);
    const taken = stream.send([message('+6421000001', 'i mua 👋🏽')]);
    // Wait until core holds the batch.
    for (let i = 0; i < 100 && core.opened() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    const stopping = core.streams.close();
    release();
    await stopping;
    expect((await taken)[0]?.outcome).toEqual({ $case: 'accepted', value: { id: 'id +6421000001', status: 'accepted', numericId: 0, replayed: false } });

    const late = await failure(stream.send([message('+6421000002', 'i muri 测试')]));
    expect(late.code).toBe('unavailable');
    expect(core.stored.map((m) => m.destination)).toEqual(['+6421000001']);

    const shutDown = new Promise<boolean>((resolve) => core.server.tryShutdown(() => resolve(true)));
    const gaveUp = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000).unref());
    expect(await Promise.race([shutDown, gaveUp])).toBe(true);
  });

  it('fails a batch that core does not answer in time as a timeout', async () => {
    const core = await startCore(() => new Promise<SendResult[]>(() => undefined));
    const err = await failure(connect(core.address, 200).send([message('+6421000001', 'kei te tatari')]));
    expect(err.code).toBe('timeout');
  });

  it('fails a batch as unavailable when core is not running, and reaches core once it is', async () => {
    const core = await startCore(async (messages) => messages.map(() => accepted('id')));
    core.server.forceShutdown();
    const stream = connect(core.address);
    expect((await failure(stream.send([message('+6421000001', 'kāore')]))).code).toBe('unavailable');

    // Core back on the same address: a later batch opens a new stream to it (after gRPC's reconnect back-off).
    const again = createSendStreams(async (messages) => messages.map((m) => accepted(`anō ${m.content}`)));
    const server = new Server();
    server.addService(MessagingService, { sendMessageStream: (call: Parameters<SendStreams['handle']>[0]) => again.handle(call) } as never);
    await new Promise<void>((resolve, reject) => server.bindAsync(core.address, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    cleanup.push(() => void server.forceShutdown());
    let answer: SendResult[] | undefined;
    for (let i = 0; i < 100 && !answer; i++) {
      answer = await stream.send([message('+6421000001', 'kua hoki mai 👋🏽')]).catch(() => undefined);
      if (!answer) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer?.[0]?.outcome).toEqual({ $case: 'accepted', value: { id: 'anō kua hoki mai 👋🏽', status: 'accepted', numericId: 0, replayed: false } });
  });
});
