import { createHmac } from 'node:crypto';
import { HttpChannelSimulatorBase, type HttpChannelSimulator, type HttpChannelSimulatorOptions } from './http-channel-simulator';
import { bearerToken, isRecord, lastDigit, randomId, type JsonRequest, type JsonResponse } from './http-simulator-support';
import { postForAnswer } from './post-for-answer';

export interface WhatsAppSimulatorOptions extends HttpChannelSimulatorOptions {
  /** Signs the webhooks (X-Hub-Signature-256). */
  appSecret: string;
  /** After the send, when `read` is posted (`sent` is posted at once, `delivered` after deliverDelayMs). */
  readDelayMs?: number;
  /** How late a send to a number ending in 7 is answered, after the message was taken (default 30 s). */
  lateAnswerMs?: number;
  /** The business number handsets write to (`metadata.display_phone_number`, digits as Meta gives it); default 15550000001. */
  displayPhoneNumber?: string;
  /** Its phone number id (`metadata.phone_number_id`) in handsets' messages; default 100000000000001. */
  phoneNumberId?: string;
}

/** What a handset sends the business: a text, a tap on an interactive reply button, or a media file. */
export type WhatsAppHandsetMessage =
  | { text: string }
  | { button: { id: string; title: string } }
  | { media: { type: 'image' | 'video' | 'audio' | 'document' | 'sticker'; id: string; mimeType: string; caption?: string } };

/** A message as the simulator took it. */
export interface WhatsAppSimulatedMessage {
  id: string;
  phoneNumberId: string;
  to: string;
  type: string;
  text?: { body: string; preview_url?: boolean };
  media?: { link: string; caption?: string };
  template?: { name: string; language: { code: string }; components?: unknown[] };
}

export interface WhatsAppSimulator extends HttpChannelSimulator<WhatsAppSimulatedMessage> {
  /**
   * A handset writes to the business: posts a signed `messages` webhook, as
   * the Cloud API does, `deliveries` times (a redelivery repeats the same
   * body), in reply to `context` (a wamid) when given. Resolves with the
   * message's wamid once every delivery was answered 2xx; rejects otherwise.
   */
  handsetSends(
    from: string,
    message: WhatsAppHandsetMessage,
    options?: { deliveries?: number; context?: string; to?: { displayPhoneNumber: string; phoneNumberId: string } },
  ): Promise<string>;
}

const MEDIA_TYPES = new Set(['image', 'video', 'audio', 'document', 'sticker']);

/**
 * A WhatsApp Cloud API stand-in: `POST /{version}/{phone-number-id}/messages`
 * with the Graph API's answers and errors, then signed status webhooks.
 * Outcome by the recipient's last digit: 0 delivered, never read; 6 sent,
 * read, then delivered (webhooks keep no order: a read and its delivered
 * that happen almost together may come either way); 7 taken (sent,
 * delivered, read) but answered only after lateAnswerMs, as the Graph API
 * stalling after it committed; 8 accepted, no status at all; 9 failed
 * (131026, undeliverable); else sent, delivered, read.
 */
/** Where the simulator takes a handset's message to post to hermod (see handsetWrites). */
export const HANDSET_MESSAGES_PATH = '/_simulator/handset-messages';

export function createWhatsAppSimulator(options: WhatsAppSimulatorOptions): WhatsAppSimulator {
  return new Simulator(options);
}

class Simulator extends HttpChannelSimulatorBase<WhatsAppSimulatedMessage, WhatsAppSimulatorOptions> implements WhatsAppSimulator {
  private readonly readDelayMs: number;

  constructor(options: WhatsAppSimulatorOptions) {
    super(options);
    this.readDelayMs = Math.max(options.readDelayMs ?? 100, this.deliverDelayMs);
  }

  protected async handle(req: JsonRequest): Promise<JsonResponse> {
    if (req.url.pathname === HANDSET_MESSAGES_PATH) return this.handsetWrites(req);
    const route = /^\/(v\d+\.\d+)\/([^/]+)\/messages$/.exec(req.url.pathname);
    if (!route || req.method !== 'POST') return graphError(404, 'Unknown path components', 2500, 'OAuthException');
    if (bearerToken(req.headers) !== this.o.token) return graphError(401, 'Invalid OAuth access token - Cannot parse access token', 190, 'OAuthException');
    const parsed = readMessage(req.body);
    if (typeof parsed === 'string') return graphError(400, `(#100) ${parsed}`, 100, 'OAuthException');
    const message: WhatsAppSimulatedMessage = { id: `wamid.${randomId(16)}`, phoneNumberId: decodeURIComponent(route[2]!), ...parsed };
    this.take(message);
    if (lastDigit(message.to) === '7') await this.delays.sleep(this.o.lateAnswerMs ?? 30_000);
    return { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: message.to, wa_id: message.to }], messages: [{ id: message.id }] } };
  }

  protected async report(m: WhatsAppSimulatedMessage): Promise<void> {
    const digit = lastDigit(m.to);
    if (digit === '8') return;
    const at = this.timeline();
    if (digit === '9') {
      await at(this.deliverDelayMs);
      await this.post(m, 'failed', [
        { code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Message could not be delivered' } },
      ]);
      return;
    }
    await at(0);
    await this.post(m, 'sent');
    await at(this.deliverDelayMs);
    if (digit === '6') {
      await this.post(m, 'read');
      await this.post(m, 'delivered');
      return;
    }
    await this.post(m, 'delivered');
    if (digit === '0') return;
    await at(this.readDelayMs);
    await this.post(m, 'read');
  }

  private post(m: WhatsAppSimulatedMessage, status: string, errors?: unknown[]): Promise<void> {
    const body = Buffer.from(JSON.stringify(statusWebhook(m, status, errors)));
    return this.postWebhook(body, { 'x-hub-signature-256': this.sign(body) });
  }

  private sign(body: Buffer): string {
    return `sha256=${createHmac('sha256', this.o.appSecret).update(body).digest('hex')}`;
  }

  /**
   * The simulator's own door, not the Graph API's: `POST /_simulator/handset-messages` with `{from, text, context?}`
   * (the sender's bearer token) makes a handset write to the business, as `handsetSends` does, so `hermod reply
   * --whatsapp` can under `npm start`, whose webhook secret only the simulators and the gateways know.
   */
  private async handsetWrites(req: JsonRequest): Promise<JsonResponse> {
    if (req.method !== 'POST') return { status: 405, body: { error: 'POST {from, text, context?}' } };
    if (bearerToken(req.headers) !== this.o.token) return { status: 401, body: { error: 'the bearer token is not the simulator’s (HERMOD_WAB_TOKEN)' } };
    const { from, text, context } = isRecord(req.body) ? req.body : {};
    const digits = typeof from === 'string' ? from.replace(/^\+/, '') : '';
    // What the gateway reads from a webhook: a sender of 6 or more digits, a text with something in it.
    if (!/^[1-9]\d{5,14}$/.test(digits) || typeof text !== 'string' || text.trim() === '' || (context !== undefined && typeof context !== 'string')) {
      return { status: 400, body: { error: 'from must be a handset number (+ and 6 to 15 digits), text a text with something in it, context a wamid' } };
    }
    try {
      const id = await this.handsetSends(digits, { text }, context ? { context } : {});
      return { status: 200, body: { id, from: digits, to: this.o.displayPhoneNumber ?? '15550000001' } };
    } catch (err) {
      return { status: 502, body: { error: (err as Error).message } };
    }
  }

  async handsetSends(
    from: string,
    message: WhatsAppHandsetMessage,
    options: { deliveries?: number; context?: string; to?: { displayPhoneNumber: string; phoneNumberId: string } } = {},
  ): Promise<string> {
    const id = `wamid.${randomId(16)}`;
    const metadata = {
      display_phone_number: options.to?.displayPhoneNumber ?? this.o.displayPhoneNumber ?? '15550000001',
      phone_number_id: options.to?.phoneNumberId ?? this.o.phoneNumberId ?? '100000000000001',
    };
    const body = Buffer.from(JSON.stringify(messagesWebhook(metadata, from, id, message, options.context)));
    for (let i = 0; i < (options.deliveries ?? 1); i++) {
      const answer = await postForAnswer(this.o.webhookUrl, body, { 'x-hub-signature-256': this.sign(body) });
      if (answer.status < 200 || answer.status >= 300) throw new Error(`the webhook answered ${answer.status}: ${answer.body}`);
    }
    return id;
  }
}

/** The request's message fields, or what is wrong with them (Graph words it as a parameter error). */
function readMessage(body: unknown): Omit<WhatsAppSimulatedMessage, 'id' | 'phoneNumberId'> | string {
  if (!isRecord(body)) return 'The request body must be a JSON object';
  if (body.messaging_product !== 'whatsapp') return 'The parameter messaging_product is required and must be whatsapp';
  if (typeof body.to !== 'string' || !/^\d{6,15}$/.test(body.to)) return 'Invalid parameter: to';
  const type = body.type ?? 'text';
  if (typeof type !== 'string') return 'Invalid parameter: type';
  const to = body.to;
  const content = body[type];
  if (type === 'text') {
    if (!isRecord(content) || typeof content.body !== 'string' || !content.body) return "The parameter text['body'] is required";
    return { to, type, text: { body: content.body, ...(typeof content.preview_url === 'boolean' ? { preview_url: content.preview_url } : {}) } };
  }
  if (MEDIA_TYPES.has(type)) {
    if (!isRecord(content) || typeof content.link !== 'string' || !/^https?:\/\//.test(content.link))
      return `The parameter ${type}['link'] must be an http(s) URL`;
    return { to, type, media: { link: content.link, ...(typeof content.caption === 'string' ? { caption: content.caption } : {}) } };
  }
  if (type === 'template') {
    if (!isRecord(content) || typeof content.name !== 'string' || !content.name) return "The parameter template['name'] is required";
    if (!isRecord(content.language) || typeof content.language.code !== 'string') return "The parameter template['language']['code'] is required";
    if (content.components !== undefined && !Array.isArray(content.components)) return "The parameter template['components'] must be an array";
    const components = Array.isArray(content.components) ? { components: content.components as unknown[] } : {};
    return { to, type, template: { name: content.name, language: { code: content.language.code }, ...components } };
  }
  return `Invalid parameter: type ${JSON.stringify(type)}`;
}

function graphError(status: number, message: string, code: number, type: string): JsonResponse {
  return { status, body: { error: { message, type, code, fbtrace_id: randomId(8) } } };
}

function statusWebhook(m: WhatsAppSimulatedMessage, status: string, errors?: unknown[]) {
  const value = {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: m.phoneNumberId, phone_number_id: m.phoneNumberId },
    statuses: [{ id: m.id, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: m.to, ...(errors ? { errors } : {}) }],
  };
  return { object: 'whatsapp_business_account', entry: [{ id: m.phoneNumberId, changes: [{ field: 'messages', value }] }] };
}

/** A handset's message as the Cloud API posts it (`value.contacts` and `value.messages`). */
function messagesWebhook(
  metadata: { display_phone_number: string; phone_number_id: string },
  from: string,
  id: string,
  message: WhatsAppHandsetMessage,
  context?: string,
) {
  const content =
    'text' in message
      ? { type: 'text', text: { body: message.text } }
      : 'button' in message
        ? { type: 'interactive', interactive: { type: 'button_reply', button_reply: message.button } }
        : {
            type: message.media.type,
            [message.media.type]: {
              id: message.media.id,
              mime_type: message.media.mimeType,
              sha256: randomId(16),
              ...(message.media.caption ? { caption: message.media.caption } : {}),
            },
          };
  const value = {
    messaging_product: 'whatsapp',
    metadata,
    contacts: [{ profile: { name: 'Handset' }, wa_id: from }],
    messages: [
      {
        ...(context ? { context: { from: metadata.display_phone_number, id: context } } : {}),
        from,
        id,
        timestamp: String(Math.floor(Date.now() / 1000)),
        ...content,
      },
    ],
  };
  return { object: 'whatsapp_business_account', entry: [{ id: 'simulated-waba', changes: [{ value, field: 'messages' }] }] };
}
