import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import { applicationNamed } from '../accounts/application-named';
import type { CarrierEventsRequest, ImContact, ImListRequest, ImSendRequest, ImTemplate, RateBudgetRequest } from '../../proto/gen/hermod/v1/im';
import type { Bus } from '../ports/bus';
import { topicName } from '../ports/bus';
import type { AccountStore } from '../ports/account-store';
import type { ImStore } from '../ports/im-store';
import type { ImIntake } from '../im/im-intake';
import type { ImRateBudget } from '../im/im-rate-budget';
import { encodeStatus } from '../ports/bus-payloads';
import { isMessageStatus } from '../domain/message-status';
import { HermodError } from '../../lib/errors';
import { checkDestination } from '../domain/destination-problem';
import { unaryHandler } from './unary-handler';
import { placeholdersOf, unfillableProblem } from '../im/template-placeholders';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The IntelligentMessaging gRPC service: sends, carrier webhooks, and the operators' templates and contacts. */
export function imService(deps: {
  accept: ImIntake;
  bus: Bus;
  applications: AccountStore;
  im: ImStore;
  rateBudget: ImRateBudget;
}): UntypedServiceImplementation {
  const appId = async (name: string): Promise<string> => {
    const app = await applicationNamed(deps.applications, name);
    if (!app) throw new HermodError('not_found', `no application named ${name}`);
    return app.id;
  };
  return {
    sendMessage: unaryHandler('ImSendMessage', async (req: ImSendRequest) =>
      deps.accept({
        applicationId: req.applicationId,
        destination: req.destination ?? { contactId: '', mobile: '', email: '' },
        message: {
          type: req.message?.type ?? '',
          text: req.message?.text ?? '',
          media: req.message?.media,
          template: req.message?.template,
        },
        attempts: req.attempts.map((a) => ({ channel: a.channel, event: a.event, ...(a.timeout !== undefined ? { timeout: a.timeout } : {}) })),
        reference: req.reference,
        schedulerPipe: req.schedulerPipe,
        dedupKey: req.dedupKey,
      }),
    ),

    // Verified and parsed by the gateway; onto the status topic, where core's status consumer resolves carrier ids.
    reportCarrierEvents: unaryHandler('ReportCarrierEvents', async (req: CarrierEventsRequest) => {
      const events = req.events.filter((e) => e.carrierId && isMessageStatus(e.status));
      await deps.bus.publish(
        topicName('status'),
        events.map((e) => ({
          key: e.carrierId,
          value: encodeStatus({
            id: '',
            carrierId: e.carrierId,
            status: e.status as never,
            at: e.at || Date.now(),
            errorCode: e.errorCode,
            detail: e.detail,
            channel: req.channel,
          }),
        })),
      );
      return { recorded: events.length };
    }),

    takeRateBudget: unaryHandler('TakeRateBudget', async (req: RateBudgetRequest) => {
      if (!req.applicationId) throw new HermodError('missing_attrib', 'application_id is required');
      return deps.rateBudget.take(req.applicationId, req.wanted);
    }),

    upsertTemplate: unaryHandler('ImUpsertTemplate', async (req: ImTemplate) => {
      if (!UUID.test(req.id)) throw new HermodError('invalid_attrib', 'template id must be a lowercase UUID');
      if (!req.name || !req.body) throw new HermodError('invalid_attrib', 'template name and body are required');
      if (!/^[A-Za-z_]{2,5}$/.test(req.language))
        throw new HermodError('invalid_attrib', 'template language must be 2..5 letters or underscores, e.g. en or en_US');
      const unfillable = unfillableProblem(placeholdersOf(req.body));
      if (unfillable) throw new HermodError('invalid_attrib', unfillable);
      await deps.im.upsertTemplate({
        applicationId: await appId(req.applicationName),
        id: req.id,
        name: req.name,
        language: req.language,
        body: req.body,
        updatedAt: Date.now(),
      });
      return req;
    }),
    listTemplates: unaryHandler('ImListTemplates', async (req: ImListRequest) => ({
      templates: (await deps.im.listTemplates(await appId(req.applicationName))).map((t) => ({
        applicationName: req.applicationName,
        id: t.id,
        name: t.name,
        language: t.language,
        body: t.body,
      })),
    })),
    upsertContact: unaryHandler('ImUpsertContact', async (req: ImContact) => {
      if (!UUID.test(req.contactId)) throw new HermodError('invalid_attrib', 'contact id must be a lowercase UUID');
      if (!req.mobile && !req.email && !req.whatsappId) throw new HermodError('invalid_attrib', 'a contact needs a mobile, an e-mail or a WhatsApp id');
      if (req.mobile && !/^\+[1-9][0-9]{1,14}$/.test(req.mobile)) throw new HermodError('invalid_attrib', 'mobile must be E.164, e.g. +6421000001');
      if (req.mobile) checkDestination(req.mobile, 'mobile');
      // WhatsApp's ids are the number's digits, country code first (wa_id); a + before them is read as well.
      if (req.whatsappId && !/^\+?[1-9][0-9]{1,14}$/.test(req.whatsappId))
        throw new HermodError('invalid_attrib', 'WhatsApp id must be the number’s digits, country code first, e.g. 6421000001');
      if (req.whatsappId) checkDestination(req.whatsappId, 'WhatsApp id');
      await deps.im.upsertContact({
        applicationId: await appId(req.applicationName),
        contactId: req.contactId,
        mobile: req.mobile,
        email: req.email,
        whatsappId: req.whatsappId,
        updatedAt: Date.now(),
      });
      return req;
    }),
    listContacts: unaryHandler('ImListContacts', async (req: ImListRequest) => ({
      contacts: (await deps.im.listContacts(await appId(req.applicationName))).map((c) => ({
        applicationName: req.applicationName,
        contactId: c.contactId,
        mobile: c.mobile,
        email: c.email,
        whatsappId: c.whatsappId,
      })),
    })),
  };
}
