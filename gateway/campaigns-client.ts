import { once } from 'node:events';
import { makeGenericClientConstructor, type ChannelCredentials, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import {
  type CampaignsClient as GrpcCampaignsClient,
  ImportKind,
  type ImportCommit,
  type ImportResult,
  type ListsChunk,
  type Member,
  type ReportChunk,
  type Template,
} from '../proto/gen/hermod/v1/campaigns';
import type { HermodError } from '../lib/errors';
import { fromServiceError, grpcCodeName } from '../lib/grpc-errors';
import { CampaignsServiceWithReportWire } from '../proto/report-chunk-wire';
import { unaryCall } from './unary-call';
import { grpcDuration } from '../lib/metrics';
import { CORE_CHANNEL_OPTIONS } from './core-channel-options';

/** One import of members as it streams to core: write batches, then commit, or abort. */
export interface ImportSession {
  write(members: Member[]): Promise<void>;
  commit(fields: ImportCommit): Promise<ImportResult>;
  abort(): void;
}

export interface CampaignsClient {
  startImport(applicationId: string, kind: 'list' | 'campaign'): ImportSession;
  /** The application's active lists, or only the one `listId` names (none when it is not one). */
  streamLists(applicationId: string, listId?: number): AsyncIterable<ListsChunk>;
  deleteLists(applicationId: string, listIds: number[]): Promise<number[]>;
  listTemplates(applicationId: string): Promise<Template[]>;
  streamCampaignReport(applicationId: string, campaignId: number): AsyncIterable<ReportChunk>;
  health(): Promise<{ ok: boolean; detail: string }>;
  close(): void;
}

/** The generated client, reading the report's chunks as views of the received messages (proto/report-chunk-wire.ts). */
const CampaignsClientWithReportWire = makeGenericClientConstructor(
  CampaignsServiceWithReportWire,
  'hermod.v1.Campaigns',
) as unknown as typeof GrpcCampaignsClient;

/** A million members take seconds, not minutes; this only bounds a stuck call. */
const STREAM_TIMEOUT_MS = 10 * 60_000;
/** The health call: core answers its own within 2 s, whatever its engines do. */
const HEALTH_TIMEOUT_MS = 3000;

const deadline = (ms: number) => ({ deadline: new Date(Date.now() + ms) });

async function* mapped<T>(method: string, stream: ClientReadableStream<T>): AsyncGenerator<T> {
  const end = grpcDuration.startTimer({ side: 'client', method });
  try {
    for await (const chunk of stream as AsyncIterable<T>) yield chunk;
    end({ code: 'OK' });
  } catch (err) {
    end({ code: grpcCodeName((err as ServiceError).code) });
    throw fromServiceError(err as ServiceError);
  } finally {
    stream.cancel(); // a consumer that stops early ends the call
  }
}

export function createCampaignsClient(address: string, channelCredentials: ChannelCredentials): CampaignsClient {
  const client = new CampaignsClientWithReportWire(address, channelCredentials, {
    ...CORE_CHANNEL_OPTIONS,
    'grpc.max_send_message_length': 64 * 1024 * 1024,
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc-node.flow_control_window': 4 * 1024 * 1024,
  });
  const unary = <Req, Res>(method: string, fn: unknown, req: Req): Promise<Res> => unaryCall<Req, Res>(client, method, fn as never, req);

  return {
    startImport(applicationId, kind) {
      const end = grpcDuration.startTimer({ side: 'client', method: 'ImportMembers' });
      let settle!: { resolve: (r: ImportResult) => void; reject: (e: HermodError) => void };
      const result = new Promise<ImportResult>((resolve, reject) => (settle = { resolve, reject }));
      result.catch(() => undefined); // read by commit(); an aborted import's failure is expected
      const call = client.importMembers(deadline(STREAM_TIMEOUT_MS), (err, res) => {
        end({ code: err ? grpcCodeName(err.code) : 'OK' });
        if (err) settle.reject(fromServiceError(err));
        else settle.resolve(res);
      });
      let failed: HermodError | undefined;
      result.catch((e: HermodError) => (failed = e));
      call.write({
        part: { $case: 'begin', value: { applicationId, kind: kind === 'campaign' ? ImportKind.IMPORT_KIND_CAMPAIGN : ImportKind.IMPORT_KIND_LIST } },
      });
      return {
        async write(members) {
          if (failed) throw failed;
          if (!call.write({ part: { $case: 'members', value: { members } } })) {
            // Core is behind: wait for it, or for the call to fail.
            await Promise.race([once(call, 'drain'), result.then(() => undefined)]);
          }
        },
        async commit(fields) {
          call.write({ part: { $case: 'commit', value: fields } });
          call.end();
          return result;
        },
        abort() {
          call.cancel();
        },
      };
    },
    streamLists: (applicationId, listId = 0) => mapped('StreamLists', client.streamLists({ applicationId, listId }, deadline(STREAM_TIMEOUT_MS))),
    async deleteLists(applicationId, listIds) {
      const res = await unary<object, { listIds: number[] }>('DeleteLists', client.deleteLists as never, { applicationId, listIds });
      return res.listIds;
    },
    async listTemplates(applicationId) {
      const res = await unary<object, { templates: Template[] }>('ListTemplates', client.listTemplates as never, { applicationId, applicationName: '' });
      return res.templates;
    },
    streamCampaignReport: (applicationId, campaignId) =>
      mapped('StreamCampaignReport', client.streamCampaignReport({ applicationId, campaignId }, deadline(STREAM_TIMEOUT_MS))),
    // Core answers within 2 s (its own probes' limit): a core away or hung is told to the probe in time, not after 15 s.
    health: () => unaryCall(client, 'Health', client.health as never, {}, HEALTH_TIMEOUT_MS),
    close: () => client.close(),
  };
}
