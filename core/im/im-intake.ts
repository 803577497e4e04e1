import type { ImStore } from '../ports/im-store';
import { textTooLongFor } from '../domain/channel-text-limits';
import type { MessageRecord } from '../ports/message-history';
import type { MessageIntake } from '../messages/message-intake';
import type { Accounts } from '../accounts/accounts';
import type { NumericIds } from '../messages/numeric-ids';
import { fillTemplate, placeholdersOf, unfillableProblem } from './template-placeholders';
import { HermodError } from '../../lib/errors';
import { MAX_PARTS as MAX_SMS_PARTS, measureSms } from '../domain/sms-segments';
import { addressFor, isKnownEvent, neverReported, parseAttemptList, type ImAttemptPlan, type ImChannel, type ImPlan } from './im-plan';
import { keyedImMessageId, newImMessageId } from './im-ids';
import { mailSubject } from './mail-subject';

interface ImRequest {
  applicationId: string;
  destination: { contactId: string; mobile: string; email: string };
  message: {
    type: string;
    text: string;
    media?: { mimeType: string; url: string };
    template?: { templateId: string; language: string; parameters: { name: string; text: string }[] };
  };
  attempts: { channel: string; event: string; timeout?: number }[];
  reference: string;
  schedulerPipe: string;
  /** Set with an Idempotency-Key: the message's id derives from it (see im.proto). */
  dedupKey?: string;
}

/**
 * Accepts an Intelligent Messaging request: resolves the contact and the
 * template, settles the attempt sequence (the request's, else the
 * application's default, else the service default), and stores the message
 * with that plan. The orchestrator takes it from the `im` topic. Answers its
 * id, and whether it was stored before (`replayed`: a keyed retry).
 */
export function createImIntake(deps: { im: ImStore; intake: MessageIntake; accounts: Accounts; numericIds: NumericIds; defaultAttempts: string }) {
  return async function accept(req: ImRequest): Promise<{ id: string; replayed: boolean }> {
    if (!req.applicationId) throw new HermodError('unauthorized', 'application is required');
    const destination = { mobile: req.destination.mobile, email: req.destination.email, whatsappId: '' };
    if (req.destination.contactId) {
      const contact = await deps.im.getContact(req.applicationId, req.destination.contactId);
      if (!contact)
        throw new HermodError('not_found', `contact ${req.destination.contactId} is not a contact of this application`, {
          fields: [{ field: 'destination.contact_id', description: 'no such contact' }],
        });
      // What the request names wins over the contact's own: a mobile given sends every phone channel there, WhatsApp
      // included, so a fallback from WhatsApp to SMS never reaches two handsets (nor credits a reply to the wrong one).
      destination.whatsappId = destination.mobile && destination.mobile !== contact.mobile ? '' : contact.whatsappId;
      destination.mobile ||= contact.mobile;
      destination.email ||= contact.email;
    }

    const type = req.message.type as ImPlan['type'];
    let text = req.message.text;
    let template: ImPlan['template'];
    if (type === 'template') {
      const t = req.message.template;
      if (!t) throw new HermodError('invalid_attrib', 'message.template is required for a template message');
      const stored = await deps.im.getTemplate(req.applicationId, t.templateId);
      if (!stored)
        throw new HermodError('not_found', `template ${t.templateId} is not a template of this application`, {
          fields: [{ field: 'message.template.template_id', description: 'no such template' }],
        });
      // hermod holds one language of a template: one asked in another would go out in the stored words on SMS and be
      // refused by WhatsApp (no such translation), so it is refused now.
      if (t.language && t.language.toLowerCase() !== stored.language.toLowerCase()) {
        const problem = `template ${t.templateId} is held in ${stored.language}, not ${t.language}`;
        throw new HermodError('unprocessable', problem, { fields: [{ field: 'message.template.language', description: problem }] });
      }
      const values = new Map(t.parameters.map((p) => [p.name, p.text]));
      const placeholders = placeholdersOf(stored.body);
      // A template stored before its placeholders were checked: its braces would reach the handset.
      const unfillable = unfillableProblem(placeholders);
      if (unfillable) throw new HermodError('unprocessable', unfillable, { fields: [{ field: 'message.template.template_id', description: unfillable }] });
      const missing = placeholders.names.filter((n) => !values.has(n));
      if (missing.length > 0)
        throw new HermodError('unprocessable', `template parameters missing: ${missing.join(', ')}`, {
          fields: missing.map((n) => ({ field: 'message.template.parameters', description: `${n} is required by the template` })),
        });
      text = fillTemplate(stored.body, values);
      // As held: a language asked in other case (`EN_us`) is the same one, and WhatsApp takes it as registered.
      template = { id: stored.id, name: stored.name, language: stored.language, parameters: t.parameters };
    } else if (type === 'media') {
      if (!req.message.media) throw new HermodError('invalid_attrib', 'message.media is required for a media message');
      text ||= req.message.media.url;
    }

    const attempts = await attemptsFor(req);
    const reachable = attempts.filter((a) => addressFor(a.channel, destination));
    if (reachable.length === 0) {
      throw new HermodError('unprocessable', `none of the delivery attempts (${attempts.map((a) => a.channel).join(', ')}) can reach this destination`);
    }
    // A chat channel's text limit: a text no reachable attempt can carry is refused now, not after each failed in turn.
    const tooLongFor = (channel: string): string | undefined => textTooLongFor(channel, type, text);
    if (reachable.every((a) => tooLongFor(a.channel))) {
      const reasons = [...new Set(reachable.map((a) => tooLongFor(a.channel)!))];
      throw new HermodError('unprocessable', `no delivery attempt can carry this message: ${reasons.join('; ')}`, {
        fields: [{ field: type === 'text' ? 'message.text.body' : 'message.template', description: reasons.join('; ') }],
      });
    }
    // SMS concatenates at most 255 parts: a text longer is refused now, not after each attempt failed in turn.
    const smsParts = reachable.every((a) => a.channel === 'sms' || tooLongFor(a.channel)) ? measureSms(text).count : 0;
    if (smsParts > MAX_SMS_PARTS) {
      throw new HermodError(
        'unprocessable',
        `no delivery attempt can carry this message: as SMS it needs ${smsParts} parts, at most ${MAX_SMS_PARTS} can be concatenated`,
        {
          fields: [{ field: type === 'text' ? 'message.text.body' : 'message', description: `too long for SMS: ${smsParts} parts` }],
        },
      );
    }
    const plan: ImPlan = {
      type,
      text,
      ...(req.message.media ? { media: req.message.media } : {}),
      ...(template ? { template } : {}),
      destination,
      attempts,
      reference: req.reference,
      schedulerPipe: req.schedulerPipe,
      subject: mailSubject(template?.name, req.message.text, req.message.media?.url),
    };
    const id = req.dedupKey ? keyedImMessageId(req.applicationId, req.dedupKey) : newImMessageId();
    const record: MessageRecord = {
      id,
      numericId: deps.numericIds(),
      applicationId: req.applicationId,
      channel: 'im',
      direction: 'MT',
      destination: destination.mobile || destination.email || destination.whatsappId,
      source: '',
      content: JSON.stringify(plan),
      reference: req.reference,
      messageClass: type,
      mask: '',
      smsClass: 0,
      scheduledAt: 0,
      integrationId: req.schedulerPipe,
      via: 'im_v1',
      segments: 1,
      acceptedAt: Date.now(),
      replyTo: '',
    };
    const [result] = await deps.intake.acceptRecords([record], { keyed: !!req.dedupKey });
    if (!result?.ok) throw result?.ok === false ? result.error : new HermodError('internal', 'the message was not stored');
    return { id: result.id, replayed: result.replayed ?? false };
  };

  async function attemptsFor(req: ImRequest): Promise<ImAttemptPlan[]> {
    if (req.attempts.length > 0) {
      const unknown = req.attempts.findIndex((a) => !isKnownEvent(a.event));
      if (unknown >= 0) {
        const description = 'is not an event hermod reports: it can wait for submitted, sent, delivered (received) or read';
        throw new HermodError('unprocessable', `delivery_attempts[${unknown}].event: ${description}`, {
          fields: [{ field: `delivery_attempts[${unknown}].event`, description }],
        });
      }
      // Refused now: waiting for it, the attempt could only time out (24 h by default) and the message end expired.
      for (const [i, a] of req.attempts.entries()) {
        const never = neverReported(a.channel as ImChannel, a.event);
        if (never)
          throw new HermodError('unprocessable', `delivery_attempts[${i}].event: ${never}`, {
            fields: [{ field: `delivery_attempts[${i}].event`, description: never }],
          });
      }
      return req.attempts.map((a) => ({ channel: a.channel as ImChannel, event: a.event, ...(a.timeout !== undefined ? { timeout: a.timeout } : {}) }));
    }
    const own = (await deps.accounts.callbackSettings(req.applicationId))?.imDefaultAttempts;
    return parseAttemptList(own || deps.defaultAttempts);
  }
}

export type ImIntake = ReturnType<typeof createImIntake>;
