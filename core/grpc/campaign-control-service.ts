import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type {
  CampaignProgress,
  CampaignRef,
  DryRunCampaignRequest,
  DryRunCampaignResult,
  ListCampaignsRequest,
} from '../../proto/gen/hermod/v1/campaign_control';
import type { CampaignControl } from '../campaigns/campaign-control';
import type { DryRunRequest, DryRunResult } from '../campaigns/campaign-dry-run';
import { unaryHandler } from './unary-handler';

export interface CampaignControlServices {
  control: CampaignControl;
  dryRun: (req: DryRunRequest) => Promise<DryRunResult>;
}

/**
 * The CampaignControl gRPC service (proto/hermod/v1/campaign_control.proto):
 * an unknown application or campaign is NOT_FOUND, resuming or pausing a
 * cancelled campaign FAILED_PRECONDITION (errors map in unaryHandler).
 */
export function campaignControlService(s: CampaignControlServices): UntypedServiceImplementation {
  return {
    listCampaigns: unaryHandler('ListCampaigns', async (req: ListCampaignsRequest) => ({ campaigns: await s.control.list(req.application) })),
    showCampaign: unaryHandler('ShowCampaign', (req: CampaignRef): Promise<CampaignProgress> => s.control.show(req.application, req.campaignId)),
    pauseCampaign: unaryHandler('PauseCampaign', (req: CampaignRef): Promise<CampaignProgress> => s.control.pause(req.application, req.campaignId)),
    resumeCampaign: unaryHandler('ResumeCampaign', (req: CampaignRef): Promise<CampaignProgress> => s.control.resume(req.application, req.campaignId)),
    cancelCampaign: unaryHandler('CancelCampaign', (req: CampaignRef): Promise<CampaignProgress> => s.control.cancel(req.application, req.campaignId)),
    dryRunCampaign: unaryHandler('DryRunCampaign', (req: DryRunCampaignRequest): Promise<DryRunCampaignResult> => s.dryRun(req)),
  };
}
