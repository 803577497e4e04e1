import { createHmac } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  bearerToken,
  createDelays,
  createJsonServer,
  createWebhookPoster,
  isRecord,
  keep,
  lastDigit,
  randomId,
  type JsonRequest,
  type JsonResponse,
  type JsonServer,
  type WebhookPoster,
} from './http-simulator-support';

export interface MmsSimulatorOptions {
  host?: string;
  port?: number;
  /** The bearer token senders must present. */
  token: string;
  /** Signs the delivery reports (X-Signature). */
  webhookSecret: string;
  /** Where delivery reports go (http or https; self-signed certificates are accepted). */
  webhookUrl: string;
  /** After the send, when `delivered` (or `failed`) is posted; `sent` is posted at once. */
  deliverDelayMs?: number;
  /** Tries per webhook before it is given up. */
  webhookAttempts?: number;
}

/** An MMS as the simulator took it. */
export interface MmsSimulatedMessage {
  id: string;
  from: string;
  to: string;
  subject?: string;
  text?: string;
  media: { url: string; content_type: string }[];
}

export interface MmsSimulatorEvents {
  message: [MmsSimulatedMessage];
  webhookFailed: [{ url: string; error: string }];
}

export interface MmsSimulator extends EventEmitter<MmsSimulatorEvents> {
  start(): Promise<{ port: number }>;
  /** Stops listening and drops the reports not yet posted. */
  stop(): Promise<void>;
  readonly port: number;
  /** The latest messages taken (at most MAX_KEPT_MESSAGES). */
  readonly received: MmsSimulatedMessage[];
}

/**
 * The generic MMS provider of mms-carrier.ts: `POST /v1/mms` answered 201
 * `{id}`, then signed delivery reports. Outcome by the recipient's last
 * digit: 9 sent, then failed; else sent, then delivered.
 */
export function createMmsSimulator(options: MmsSimulatorOptions): MmsSimulator {
  return new Simulator(options);
}

class Simulator extends EventEmitter<MmsSimulatorEvents> implements MmsSimulator {
  readonly received: MmsSimulatedMessage[] = [];
  private readonly o: MmsSimulatorOptions;
  private readonly deliverDelayMs: number;
  private readonly poster: WebhookPoster;
  private readonly delays = createDelays();
  private readonly server: JsonServer;

  constructor(options: MmsSimulatorOptions) {
    super();
    this.o = options;
    this.deliverDelayMs = options.deliverDelayMs ?? 50;
    this.poster = createWebhookPoster({ attempts: options.webhookAttempts ?? 4 });
    this.server = createJsonServer(options.host ?? '127.0.0.1', options.port ?? 0, (req) => this.handle(req));
  }

  get port(): number {
    return this.server.port;
  }

  start(): Promise<{ port: number }> {
    return this.server.start();
  }

  async stop(): Promise<void> {
    this.delays.cancel();
    this.poster.close();
    await this.server.stop();
  }

  private handle(req: JsonRequest): JsonResponse {
    if (req.url.pathname !== '/v1/mms' || req.method !== 'POST') return problem(404, 'not_found', 'no such resource');
    if (bearerToken(req.headers) !== this.o.token) return problem(401, 'unauthorized', 'invalid bearer token');
    const parsed = readMms(req.body);
    if (typeof parsed === 'string') return problem(400, 'invalid_request', parsed);
    const message: MmsSimulatedMessage = { id: randomId(12), ...parsed };
    keep(this.received, message);
    this.emit('message', message);
    this.report(message).catch((err: unknown) => this.emit('webhookFailed', { url: this.o.webhookUrl, error: String(err) }));
    return { status: 201, body: { id: message.id } };
  }

  private async report(m: MmsSimulatedMessage): Promise<void> {
    const started = Date.now();
    const at = (ms: number) => this.delays.sleep(ms - (Date.now() - started));
    await at(0);
    await this.post({ id: m.id, status: 'sent' });
    await at(this.deliverDelayMs);
    if (lastDigit(m.to) === '9') await this.post({ id: m.id, status: 'failed', error_code: 'unreachable' });
    else await this.post({ id: m.id, status: 'delivered' });
  }

  private async post(report: { id: string; status: string; error_code?: string }): Promise<void> {
    if (this.delays.cancelled) return;
    const body = Buffer.from(JSON.stringify({ ...report, timestamp: new Date().toISOString() }));
    const signature = `sha256=${createHmac('sha256', this.o.webhookSecret).update(body).digest('hex')}`;
    const { ok, error } = await this.poster.post(this.o.webhookUrl, body, { 'x-signature': signature });
    if (!ok && !this.delays.cancelled) this.emit('webhookFailed', { url: this.o.webhookUrl, error });
  }
}

/** The request's fields, or what is wrong with them. */
function readMms(body: unknown): Omit<MmsSimulatedMessage, 'id'> | string {
  if (!isRecord(body)) return 'the body must be a JSON object';
  const { from, to, subject, text, media } = body;
  if (typeof from !== 'string' || !from) return 'from is required';
  if (typeof to !== 'string' || !/^\+\d{6,15}$/.test(to)) return 'to must be an E.164 number';
  if (subject !== undefined && typeof subject !== 'string') return 'subject must be a string';
  if (text !== undefined && typeof text !== 'string') return 'text must be a string';
  if (!Array.isArray(media)) return 'media must be an array';
  const parts: MmsSimulatedMessage['media'] = [];
  for (const m of media) {
    if (!isRecord(m) || typeof m.url !== 'string' || !/^https?:\/\//.test(m.url) || typeof m.content_type !== 'string' || !m.content_type.includes('/')) {
      return 'each media item needs an http(s) url and a content_type';
    }
    parts.push({ url: m.url, content_type: m.content_type });
  }
  if (!text && parts.length === 0) return 'an MMS needs text or media';
  return { from, to, ...(subject ? { subject } : {}), ...(text ? { text } : {}), media: parts };
}

function problem(status: number, code: string, message: string): JsonResponse {
  return { status, body: { error: { code, message } } };
}
