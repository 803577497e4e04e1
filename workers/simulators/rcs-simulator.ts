import { createHmac, type KeyObject } from 'node:crypto';
import { HttpChannelSimulatorBase, type HttpChannelSimulator, type HttpChannelSimulatorOptions } from './http-channel-simulator';
import { bearerToken, isRecord, lastDigit, randomId, type JsonRequest, type JsonResponse } from './http-simulator-support';
import { createOAuthTokenIssuer, type OAuthTokenIssuer } from './oauth-token-issuer';
import { postForAnswer } from './post-for-answer';
import { FifoMap } from '../../lib/fifo-map';

export interface RcsSimulatorOptions extends Omit<HttpChannelSimulatorOptions, 'token'> {
  /** Signs the webhooks (X-Goog-Signature), as RBM's webhook client token does. */
  clientToken: string;
  /** The service account whose JWT assertions `POST /token` takes: its e-mail and public key. */
  serviceAccount: { clientEmail: string; publicKey: string | KeyObject };
  /** How long an access token lasts (RBM: an hour). */
  tokenLifetimeSeconds?: number;
  /** After the send, when READ is posted (DELIVERED after deliverDelayMs). */
  readDelayMs?: number;
}

/** An agent message as the simulator took it. */
export interface RcsSimulatedMessage {
  messageId: string;
  agentId: string;
  phone: string;
  text?: string;
  fileUrl?: string;
}

export interface RcsSimulator extends HttpChannelSimulator<RcsSimulatedMessage> {
  /** Access tokens issued so far at `POST /token`. */
  readonly tokensIssued: number;
  /** API calls refused for a missing, unknown or expired access token. */
  readonly unauthenticated: number;
  /**
   * RBM's webhook verification, as when a webhook URL is configured: POSTs
   * `{clientToken, secret}` to the webhook, which must answer 200 with the
   * secret as its body. Resolves with whether it did.
   */
  verifyWebhook(clientToken?: string): Promise<{ verified: boolean; status: number; body: string }>;
}

/** RBM's OAuth scope. */
const RBM_SCOPE = 'https://www.googleapis.com/auth/rcsbusinessmessaging';

/** Message ids kept for the ALREADY_EXISTS check (a long run must not grow without bound). */
const MAX_REMEMBERED_IDS = 100_000;

/**
 * An RCS Business Messaging stand-in: an OAuth token endpoint (`POST /token`,
 * the JWT bearer grant of a service account, see oauth-token-issuer.ts) whose
 * tokens every API call must carry and which expire;
 * `POST /v1/phones/{E.164}/agentMessages?messageId=…&agentId=…` with Google
 * API errors, a repeated messageId answered 409 ALREADY_EXISTS, then signed
 * Pub/Sub-style event webhooks, and the webhook verification handshake.
 * Outcome by the phone's last digit: 9 not RCS-capable (404 at send);
 * 0 delivered, never read; else delivered, then read.
 */
export function createRcsSimulator(options: RcsSimulatorOptions): RcsSimulator {
  return new Simulator(options);
}

class Simulator extends HttpChannelSimulatorBase<RcsSimulatedMessage, RcsSimulatorOptions> implements RcsSimulator {
  private readonly readDelayMs: number;
  private readonly seen = new FifoMap<string, true>();
  private readonly tokens: OAuthTokenIssuer;
  unauthenticated = 0;

  constructor(options: RcsSimulatorOptions) {
    super(options);
    this.readDelayMs = Math.max(options.readDelayMs ?? 100, this.deliverDelayMs);
    this.tokens = createOAuthTokenIssuer({
      serviceAccount: options.serviceAccount,
      scope: RBM_SCOPE,
      lifetimeSeconds: options.tokenLifetimeSeconds ?? 3600,
      // Its own /token, under whatever host name the key gives it.
      audienceOk: (aud) => URL.canParse(aud) && new URL(aud).pathname === '/token' && new URL(aud).port === String(this.port),
    });
  }

  get tokensIssued(): number {
    return this.tokens.issued;
  }

  async verifyWebhook(clientToken = this.o.clientToken): Promise<{ verified: boolean; status: number; body: string }> {
    const secret = randomId(8);
    const answer = await postForAnswer(this.o.webhookUrl, Buffer.from(JSON.stringify({ clientToken, secret })));
    return { verified: answer.status === 200 && answer.body === secret, ...answer };
  }

  protected handle(req: JsonRequest): JsonResponse {
    if (req.url.pathname === '/token' && req.method === 'POST') return this.tokens.issue(req.rawBody);
    const route = /^\/v1\/phones\/([^/]+)\/agentMessages$/.exec(req.url.pathname);
    if (!route || req.method !== 'POST') return googleError(404, 'NOT_FOUND', 'The requested URL was not found on this server.');
    if (!this.tokens.valid(bearerToken(req.headers))) {
      this.unauthenticated++;
      return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
    }
    const phone = decodeURIComponent(route[1]!);
    const messageId = req.url.searchParams.get('messageId') ?? '';
    const agentId = req.url.searchParams.get('agentId') ?? '';
    if (!/^\+\d{6,15}$/.test(phone)) return googleError(400, 'INVALID_ARGUMENT', 'Invalid phone number: must be E.164');
    if (!messageId || !agentId) return googleError(400, 'INVALID_ARGUMENT', 'messageId and agentId are required');
    const content = readContent(req.body);
    if (typeof content === 'string') return googleError(400, 'INVALID_ARGUMENT', content);
    if (lastDigit(phone) === '9') return googleError(404, 'NOT_FOUND', 'Requested entity was not found.');
    if (this.seen.has(`${agentId}/${messageId}`)) return googleError(409, 'ALREADY_EXISTS', 'Requested entity already exists');
    this.seen.set(`${agentId}/${messageId}`, true);
    if (this.seen.size > MAX_REMEMBERED_IDS) this.seen.shift();
    const message: RcsSimulatedMessage = { messageId, agentId, phone, ...content };
    this.take(message);
    const contentMessage = 'text' in content ? { text: content.text } : { contentInfo: { fileUrl: content.fileUrl } };
    return { status: 200, body: { name: `phones/${phone}/agentMessages/${messageId}`, sendTime: new Date().toISOString(), contentMessage } };
  }

  protected async report(m: RcsSimulatedMessage): Promise<void> {
    const at = this.timeline();
    await at(this.deliverDelayMs);
    await this.post(m, 'DELIVERED');
    if (lastDigit(m.phone) === '0') return;
    await at(this.readDelayMs);
    await this.post(m, 'READ');
  }

  /** Like RBM: a Pub/Sub push envelope, signed over the decoded event. */
  private post(m: RcsSimulatedMessage, eventType: string): Promise<void> {
    const now = new Date().toISOString();
    const event = Buffer.from(
      JSON.stringify({ senderPhoneNumber: m.phone, eventType, eventId: randomId(8), messageId: m.messageId, sendTime: now, agentId: m.agentId }),
    );
    const envelope = {
      message: { data: event.toString('base64'), messageId: randomId(8), publishTime: now },
      subscription: `projects/rbm-${m.agentId}/subscriptions/rbm-agent-subscription`,
    };
    const signature = createHmac('sha512', this.o.clientToken).update(event).digest('base64');
    return this.postWebhook(Buffer.from(JSON.stringify(envelope)), { 'x-goog-signature': signature });
  }
}

/** The message's text or file, or what is wrong with the body. */
function readContent(body: unknown): { text: string } | { fileUrl: string } | string {
  if (!isRecord(body) || !isRecord(body.contentMessage)) return 'contentMessage is required';
  const c = body.contentMessage;
  if (typeof c.text === 'string') return c.text ? { text: c.text } : 'contentMessage.text must not be empty';
  if (isRecord(c.contentInfo) && typeof c.contentInfo.fileUrl === 'string' && /^https?:\/\//.test(c.contentInfo.fileUrl))
    return { fileUrl: c.contentInfo.fileUrl };
  return 'contentMessage needs text or contentInfo.fileUrl (an http(s) URL)';
}

function googleError(code: number, status: string, message: string): JsonResponse {
  return { status: code, body: { error: { code, message, status } } };
}
