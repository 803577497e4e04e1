import { CAMPAIGNS_USAGE } from './admin-usage';
import { commandHelp } from './command-help';
import { escapeControlCharacters } from '../../core/domain/control-characters';
import { createGrpcCredentials } from '../../lib/grpc-credentials';
import { fromServiceError } from '../../lib/grpc-errors';
import type { Config } from '../../lib/config';
import { commandError } from './command-error';
import {
  CampaignControlClient,
  type CampaignProgress,
  type CampaignRef,
  type DryRunCampaignRequest,
  type DryRunCampaignResult,
  type ListCampaignsResponse,
} from '../../proto/gen/hermod/v1/campaign_control';

type Out = (line: string) => void;

/** Campaign progress as printed: times as ISO 8601, the rest as the API gives it. */
function printable(p: CampaignProgress) {
  // Field by field: the counts in the order of `campaigns list`'s columns, not the order fields were added to the API.
  return {
    application: p.application,
    campaignId: p.campaignId,
    name: p.name,
    state: p.state,
    members: p.members,
    created: p.created?.toISOString() ?? null,
    schedule: p.schedule?.toISOString() ?? null,
    submitted: p.submitted,
    delivered: p.delivered,
    failed: p.failed,
    blocked: p.blocked,
    deficient: p.deficient,
    dead: p.dead,
    remaining: p.remaining,
    currentRate: Math.round(p.currentRate * 10) / 10,
    secondsLeft: p.secondsLeft < 0 ? null : Math.round(p.secondsLeft),
  };
}

/** `hermod campaigns …`: operators' control of campaigns through core's CampaignControl service; results to `out`, errors to `err`. Returns the exit code. */
export async function runCampaignsCommand(config: Readonly<Config>, args: string[], out: Out, err: Out): Promise<number> {
  const [, verb, application, second] = args;
  const client = new CampaignControlClient(config.coreAddress, createGrpcCredentials(config.grpcTls).channel());
  const call = <Req, Res>(fn: (req: Req, cb: (err: never, res: Res) => void) => unknown, req: Req): Promise<Res> =>
    new Promise((resolve, reject) => fn.call(client, req, (err: never, res: Res) => (err ? reject(fromServiceError(err)) : resolve(res))));
  const option = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  try {
    if (verb === 'list') {
      const { campaigns } = await call<object, ListCampaignsResponse>(client.listCampaigns as never, { application: application ?? '' });
      // Every count `campaigns show` has, but the rate and estimate: a campaign whose members fail or opted out shows it here.
      out('application\tid\tname\tstate\tmembers\tsubmitted\tdelivered\tfailed\tblocked\tdeficient\tdead\tremaining');
      for (const c of campaigns) {
        out(
          `${escapeControlCharacters(c.application)}\t${c.campaignId}\t${escapeControlCharacters(c.name)}\t${c.state}\t${c.members}\t${c.submitted}\t${c.delivered}\t${c.failed}\t${c.blocked}\t${c.deficient}\t${c.dead}\t${c.remaining}`,
        );
      }
      return 0;
    }
    const rpc = { show: client.showCampaign, pause: client.pauseCampaign, resume: client.resumeCampaign, cancel: client.cancelCampaign }[verb ?? ''];
    if (rpc && application && second) {
      const progress = await call<CampaignRef, CampaignProgress>(rpc as never, { application, campaignId: second });
      out(JSON.stringify(printable(progress), null, 2));
      return 0;
    }
    if (verb === 'dry-run' && application && second) {
      const content = option('--content');
      const template = option('--template');
      if ((content === undefined) === (template === undefined)) {
        err('error: give exactly one of --content <text> and --template <name>');
        return 2;
      }
      const result = await call<DryRunCampaignRequest, DryRunCampaignResult>(client.dryRunCampaign as never, {
        application,
        listId: second,
        content: content ?? '',
        template: template ?? '',
      });
      out(JSON.stringify(result, null, 2));
      return 0;
    }
    err(commandHelp(CAMPAIGNS_USAGE, `campaigns ${verb}`));
    return 2;
  } catch (e) {
    err(commandError(e, config.coreAddress));
    return 1;
  } finally {
    client.close();
  }
}
