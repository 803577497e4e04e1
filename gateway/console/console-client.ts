import { status as GrpcStatus, type ChannelCredentials, type ServiceError } from '@grpc/grpc-js';
import { CampaignControlClient, type CampaignProgress } from '../../proto/gen/hermod/v1/campaign_control';
import { OperationsClient, type ApplicationCallbacks, type CarrierBind, type MessageJourney, type TopicBacklog } from '../../proto/gen/hermod/v1/operations';
import { HermodError } from '../../lib/errors';
import { unaryCall } from '../unary-call';
import { CORE_CHANNEL_OPTIONS } from '../core-channel-options';

/** Core's admin API as the operator console reads it: the Operations and CampaignControl services. */
export interface ConsoleClient {
  binds(): Promise<CarrierBind[]>;
  backlog(): Promise<TopicBacklog[]>;
  callbacks(): Promise<ApplicationCallbacks[]>;
  journey(id: string): Promise<MessageJourney>;
  campaigns(): Promise<CampaignProgress[]>;
  campaignAction(action: CampaignAction, application: string, campaignId: string): Promise<CampaignProgress>;
  close(): void;
}

export type CampaignAction = 'pause' | 'resume' | 'cancel';

/** A method core does not serve (yet): the console shows it as such, never as data. */
export class NotImplementedByCore extends Error {}

/** Reads for a refresh: a later refresh asks again. */
const CALL_TIMEOUT_MS = 5000;
/**
 * A campaign action writes hot state, then history, and answers with the
 * campaign's counts: while a fan-out keeps the engine busy that can take
 * longer than a read, and an operator would rather wait than be told 504 for
 * an action that went through anyway.
 */
const ACTION_TIMEOUT_MS = 30_000;

export function createConsoleClient(address: string, channelCredentials: ChannelCredentials): ConsoleClient {
  const options = CORE_CHANNEL_OPTIONS;
  const operations = new OperationsClient(address, channelCredentials, options);
  const control = new CampaignControlClient(address, channelCredentials, options);
  const call = async <Res>(
    client: OperationsClient | CampaignControlClient,
    method: string,
    fn: unknown,
    req: unknown,
    timeoutMs = CALL_TIMEOUT_MS,
  ): Promise<Res> => {
    try {
      return await unaryCall(client, method, fn as never, req, timeoutMs);
    } catch (err) {
      const cause = (err as { cause?: ServiceError }).cause;
      if (cause?.code === GrpcStatus.UNIMPLEMENTED) throw new NotImplementedByCore(`core does not implement ${method} (${cause.details})`);
      throw err;
    }
  };
  const actions = { pause: 'PauseCampaign', resume: 'ResumeCampaign', cancel: 'CancelCampaign' } as const;
  return {
    binds: async () => (await call<{ binds: CarrierBind[] }>(operations, 'ListCarrierBinds', operations.listCarrierBinds, {})).binds,
    backlog: async () => (await call<{ topics: TopicBacklog[] }>(operations, 'ListBusBacklog', operations.listBusBacklog, {})).topics,
    callbacks: async () =>
      (await call<{ applications: ApplicationCallbacks[] }>(operations, 'ListCallbackBacklog', operations.listCallbackBacklog, {})).applications,
    journey: (id) => call<MessageJourney>(operations, 'GetMessageJourney', operations.getMessageJourney, { id }),
    campaigns: async () => (await call<{ campaigns: CampaignProgress[] }>(control, 'ListCampaigns', control.listCampaigns, { application: '' })).campaigns,
    campaignAction(action, application, campaignId) {
      if (!(action in actions)) return Promise.reject(new HermodError('not_found', `no campaign action ${JSON.stringify(action)}`));
      const method = actions[action];
      const fn = { pause: control.pauseCampaign, resume: control.resumeCampaign, cancel: control.cancelCampaign }[action];
      return call<CampaignProgress>(control, method, fn, { application, campaignId }, ACTION_TIMEOUT_MS);
    },
    close() {
      operations.close();
      control.close();
    },
  };
}
