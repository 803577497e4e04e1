import { sameTypedText } from '../../lib/typed-text';
import { createGrpcCredentials } from '../../lib/grpc-credentials';
import {
  AccountsClient,
  type Application,
  type BlockList,
  type ListApplicationsResponse,
  type ListOptOutsResponse,
  type UpsertApplicationRequest,
} from '../../proto/gen/hermod/v1/accounts';
import { CampaignsClient, type ListTemplatesResponse, type Template, type UpsertTemplateRequest } from '../../proto/gen/hermod/v1/campaigns';
import { IntelligentMessagingClient, type ImContact, type ImContacts, type ImTemplate, type ImTemplates } from '../../proto/gen/hermod/v1/im';
import { type GetMessageRouteRequest, MessageRoutesClient, type MessageRouteDetails } from '../../proto/gen/hermod/v1/message_routes';
import { newApiKey } from '../../core/domain/api-key';
import { MAX_PREVIOUS_SECRET_MS } from '../../core/domain/previous-secret';
import { parseDuration } from '../../lib/duration';
import { escapeControlCharacters as cell } from '../../core/domain/control-characters';
import type { Config } from '../../lib/config';
import { fromServiceError } from '../../lib/grpc-errors';
import { ADMIN_USAGE } from './admin-usage';
import { runCampaignsCommand } from './campaigns-cli';
import { commandHelp } from './command-help';
import { privateCallbackWarning } from './private-callback-warning';
import { usageProblem } from './usage-problem';
import { quotaText } from '../../core/domain/quota-text';
import { commandError } from './command-error';
import { imRateLimit } from './im-rate-limit';
import { ROUTE_HEADER, routeLine } from './route-line';

type Out = (line: string) => void;

/**
 * Runs one operators' command, its results written to `out` and its errors,
 * warnings and usage problems to `err` (standard output and standard error);
 * returns the process exit code.
 */
export async function runAdminCommand(config: Readonly<Config>, args: string[], out: Out, err: Out): Promise<number> {
  const problem = usageProblem(args);
  if (problem) {
    err(`error: ${problem}`);
    return 2;
  }
  if (args[0] === 'campaigns') return runCampaignsCommand(config, args, out, err);
  const channelCredentials = createGrpcCredentials(config.grpcTls).channel();
  const client = new AccountsClient(config.coreAddress, channelCredentials);
  const campaigns = new CampaignsClient(config.coreAddress, channelCredentials);
  const im = new IntelligentMessagingClient(config.coreAddress, channelCredentials);
  const routes = new MessageRoutesClient(config.coreAddress, channelCredentials);
  const callOn = <Req, Res>(target: object, fn: (req: Req, cb: (err: never, res: Res) => void) => unknown, req: Req): Promise<Res> =>
    new Promise((resolve, reject) => fn.call(target, req, (err: never, res: Res) => (err ? reject(fromServiceError(err)) : resolve(res))));
  const call = <Req, Res>(fn: (req: Req, cb: (err: never, res: Res) => void) => unknown, req: Req): Promise<Res> => callOn(client, fn, req);
  const upsert = (req: Partial<UpsertApplicationRequest> & { name: string }) =>
    call<UpsertApplicationRequest, Application>(client.upsertApplication as never, {
      password: '',
      apiKey: '',
      revokeApiKey: false,
      rotateCallbackSecret: false,
      previousSecretValidSeconds: 0,
      sourceAddresses: undefined,
      quota: undefined,
      ...req,
    });
  const option = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const [group, verb, name, extra] = args;
  // Every command but `apps create` acts on an application that exists: a mistyped name must not create one.
  const changesAnApplication = (group === 'apps' && verb !== 'create' && verb !== 'list') || group === 'keys' || (group === 'optouts' && name !== undefined);
  try {
    if (changesAnApplication && name) {
      const { applications } = await call<object, ListApplicationsResponse>(client.listApplications as never, {});
      if (!applications.some((a) => sameTypedText(a.name, name))) {
        err(`error: no application named ${name} (hermod apps create ${name} makes one)`);
        return 1;
      }
    }
    if (group === 'apps' && verb === 'list') {
      const { applications } = await call<object, ListApplicationsResponse>(client.listApplications as never, {});
      out('name\tid\tpassword\tapi key\tim rate limit\tsource addresses\tquota\tstatus callback\treply callback\tim status callback\told secret signs until');
      for (const a of applications) {
        const limit = a.imRateLimit < 0 ? 'default' : a.imRateLimit === 0 ? 'none' : `${a.imRateLimit}/s`;
        const quota = a.quota && a.quota.messages > 0 ? `${a.quota.messages}/${a.quota.period}` : 'none';
        const callbacks = [a.statusCallbackUrl, a.replyCallbackUrl, a.imStatusCallbackUrl].map((u) => u || '-').join('\t');
        out(
          `${a.name}\t${a.id}\t${a.hasPassword ? 'set' : '-'}\t${a.hasApiKey ? 'set' : '-'}\t${limit}\t${a.sourceAddresses.join(' ') || '-'}\t${quota}\t${callbacks}\t${a.previousCallbackSecretUntil || '-'}`,
        );
      }
      return 0;
    }
    if (group === 'apps' && verb === 'create' && name) {
      const { applications } = await call<object, ListApplicationsResponse>(client.listApplications as never, {});
      if (applications.some((a) => sameTypedText(a.name, name))) {
        err(`error: application ${name} already exists`);
        return 1;
      }
      const apiKey = args.includes('--api-key') ? newApiKey() : '';
      const app = await upsert({ name, password: option('--password') ?? '', apiKey });
      out(`created application ${app.name} (${app.id})`);
      if (apiKey) out(`api key: ${apiKey}`);
      return 0;
    }
    if (group === 'apps' && verb === 'set-password' && name && extra) {
      await upsert({ name, password: extra });
      out(`password of ${name} set`);
      return 0;
    }
    if (group === 'apps' && verb === 'set-callbacks' && name) {
      const keep = option('--keep-old-secret');
      let keepMs = 0;
      if (keep !== undefined) {
        if (!args.includes('--rotate-secret')) {
          err('error: --keep-old-secret keeps the secret a rotation replaces: give it with --rotate-secret');
          return 2;
        }
        try {
          keepMs = parseDuration(keep);
        } catch (e) {
          err(`error: --keep-old-secret: ${(e as Error).message}`);
          return 2;
        }
        if (keepMs > MAX_PREVIOUS_SECRET_MS) {
          err(`error: --keep-old-secret is at most 7d (a receiver has moved to the new secret by then), not ${keep}`);
          return 2;
        }
      }
      const app = await upsert({
        name,
        statusCallbackUrl: option('--status'),
        replyCallbackUrl: option('--reply'),
        imStatusCallbackUrl: option('--im-status'),
        rotateCallbackSecret: args.includes('--rotate-secret'),
        previousSecretValidSeconds: Math.ceil(keepMs / 1000),
      });
      out(`callbacks of ${app.name} set`);
      for (const flag of ['--status', '--reply', '--im-status']) {
        const warning = privateCallbackWarning(flag, option(flag));
        if (warning) err(warning);
      }
      out(`signing secret: ${app.callbackSecret}`);
      const replaced = app.replacedSecretPrefix ? ` (${app.replacedSecretPrefix}…)` : '';
      if (app.previousCallbackSecretUntil) {
        out(`the secret it replaced${replaced} also signs until ${app.previousCallbackSecretUntil} (a second v1)`);
        err('note: a receiver that reads only one v1 in X-Hermod-Signature refuses these callbacks (see README, "Verifying the signature")');
      }
      // One old secret signs beside the current one: the one an earlier rotation kept stops now.
      if (app.endedPreviousSecretUntil) {
        out(
          `the older secret ${app.endedPreviousSecretPrefix}…, which was to sign until ${app.endedPreviousSecretUntil}, no longer signs: a receiver still on it refuses callbacks from now`,
        );
      }
      if (args.includes('--rotate-secret') && !app.previousCallbackSecretUntil) {
        out(
          `the secret it replaced${replaced} no longer signs${app.endedPreviousSecretUntil ? ' either' : ''}: a receiver still on it refuses callbacks from now (--keep-old-secret <duration> keeps it signing beside the new one)`,
        );
      }
      return 0;
    }
    if (group === 'keys' && verb === 'issue' && name) {
      const apiKey = newApiKey();
      await upsert({ name, apiKey });
      out(`api key: ${apiKey}`);
      return 0;
    }
    if (group === 'keys' && verb === 'revoke' && name) {
      await upsert({ name, revokeApiKey: true });
      out(`api key of ${name} revoked`);
      return 0;
    }
    if (group === 'optouts' && verb === 'list') {
      const { optOuts } = await call<object, ListOptOutsResponse>(client.listOptOuts as never, { applicationName: name ?? '' });
      out('application\thandset\tsince');
      for (const o of optOuts) out(`${o.applicationName}\t${o.handset}\t${new Date(o.at).toISOString()}`);
      return 0;
    }
    if (group === 'apps' && verb === 'set-im-attempts' && name && extra !== undefined) {
      await upsert({ name, imDefaultAttempts: extra });
      out(`default attempts of ${name}: ${extra || '(service default)'}`);
      return 0;
    }
    if (group === 'apps' && verb === 'set-sources' && name) {
      // As given: usageProblem refused any a send could not use (and core would).
      const addresses = args.slice(3);
      await upsert({ name, sourceAddresses: { addresses } });
      out(addresses.length > 0 ? `replies to ${addresses.join(', ')} go to ${name}` : `${name} claims no source addresses`);
      return 0;
    }
    if (group === 'apps' && verb === 'set-im-rate-limit' && name && extra !== undefined) {
      // usageProblem refused anything else.
      const perSecond = imRateLimit(extra)!;
      await upsert({ name, imRateLimit: perSecond });
      out(
        `Intelligent Messaging rate limit of ${name}: ${perSecond < 0 ? 'the service default' : perSecond === 0 ? 'none' : `${perSecond} requests per second`}`,
      );
      return 0;
    }
    if (group === 'apps' && verb === 'set-quota' && name) {
      if (args.includes('--clear')) {
        await upsert({ name, quota: { messages: 0, period: '' } });
        out(`${name} has no quota`);
        return 0;
      }
      const messages = Number(option('--messages'));
      const period = option('--per') ?? '';
      if (!Number.isSafeInteger(messages) || messages < 1 || !['hour', 'day', 'month'].includes(period)) {
        err('error: give --messages <whole number, 1 or more> and --per hour|day|month, or --clear');
        return 2;
      }
      await upsert({ name, quota: { messages, period } });
      out(`quota of ${name}: ${quotaText(messages, period)} (UTC)`);
      return 0;
    }
    if (group === 'blocklist' && (verb === 'add' || verb === 'remove' || verb === 'list')) {
      const app = option('--app') ?? '';
      const prefixes = args.slice(2).filter((a, i, all) => a !== '--app' && all[i - 1] !== '--app');
      if (verb === 'list') {
        const { entries } = await call<object, BlockList>(client.listBlockList as never, { applicationName: app });
        out('application\tprefix\tsince');
        for (const e of entries) out(`${e.applicationName || '(all)'}\t${e.prefix}\t${new Date(e.at).toISOString()}`);
        return 0;
      }
      if (prefixes.length === 0) {
        err(`error: give one or more E.164 numbers or prefixes, e.g. hermod blocklist ${verb} +6421`);
        return 2;
      }
      const { entries } = await call<object, BlockList>(client.updateBlockList as never, { applicationName: app, prefixes, blocked: verb === 'add' });
      const list = app ? `the block list of ${app}` : 'the global block list';
      out(`${verb === 'add' ? 'added to' : 'removed from'} ${list}: ${entries.map((e) => e.prefix).join(' ')}`);
      return 0;
    }
    if (group === 'messages' && verb === 'route' && name && extra) {
      const r = await callOn<GetMessageRouteRequest, MessageRouteDetails>(routes, routes.getMessageRoute as never, { applicationName: name, id: extra });
      out(ROUTE_HEADER);
      out(routeLine(r));
      return 0;
    }
    if (group === 'im-templates' && verb === 'list' && name) {
      const { templates } = await callOn<object, ImTemplates>(im, im.listTemplates as never, { applicationName: name });
      out('id\tname\tlanguage\tbody');
      for (const t of templates) out(`${t.id}\t${cell(t.name)}\t${t.language}\t${cell(t.body)}`);
      return 0;
    }
    if (group === 'im-templates' && verb === 'set' && name && args.length >= 7) {
      const t = await callOn<ImTemplate, ImTemplate>(im, im.upsertTemplate as never, {
        applicationName: name,
        id: args[3]!,
        name: args[4]!,
        language: args[5]!,
        body: args[6]!,
      });
      out(`template ${t.name} (${t.id}) saved`);
      return 0;
    }
    if (group === 'contacts' && verb === 'list' && name) {
      const { contacts } = await callOn<object, ImContacts>(im, im.listContacts as never, { applicationName: name });
      out('contact\tmobile\temail\twhatsapp');
      for (const c of contacts) out(`${c.contactId}\t${c.mobile}\t${c.email}\t${c.whatsappId}`);
      return 0;
    }
    if (group === 'contacts' && verb === 'set' && name && extra) {
      const c = await callOn<ImContact, ImContact>(im, im.upsertContact as never, {
        applicationName: name,
        contactId: extra,
        mobile: option('--mobile') ?? '',
        email: option('--email') ?? '',
        whatsappId: option('--whatsapp') ?? '',
      });
      out(`contact ${c.contactId} saved`);
      return 0;
    }
    if (group === 'templates' && verb === 'list' && name) {
      const { templates } = await callOn<object, ListTemplatesResponse>(campaigns, campaigns.listTemplates as never, {
        applicationId: '',
        applicationName: name,
      });
      out('id\tname\tcontent');
      for (const t of templates) out(`${t.id}\t${cell(t.name)}\t${cell(t.content)}`);
      return 0;
    }
    if (group === 'templates' && verb === 'set' && name && extra && args[4] !== undefined) {
      const t = await callOn<UpsertTemplateRequest, Template>(campaigns, campaigns.upsertTemplate as never, {
        applicationName: name,
        name: extra,
        content: args[4],
      });
      out(`template ${t.name} (${t.id}) saved`);
      return 0;
    }
    // A known command (usageProblem said so) with arguments missing: its own usage.
    err(commandHelp(ADMIN_USAGE, `${group} ${verb}`));
    return 2;
  } catch (e) {
    err(commandError(e, config.coreAddress));
    return 1;
  } finally {
    client.close();
    campaigns.close();
    im.close();
    routes.close();
  }
}
