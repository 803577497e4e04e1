import { createHmac } from 'node:crypto';
import { HttpChannelSimulatorBase, type HttpChannelSimulator, type HttpChannelSimulatorOptions } from './http-channel-simulator';
import { bearerToken, isRecord, lastDigit, randomId, type JsonRequest, type JsonResponse } from './http-simulator-support';

export interface MmsSimulatorOptions extends HttpChannelSimulatorOptions {
  /** Signs the delivery reports (X-Signature). */
  webhookSecret: string;
  /** How late a send to a number ending in 7 is answered, after the message was taken (default 30 s). */
  lateAnswerMs?: number;
}

/** An MMS as the simulator took it. */
export interface MmsSimulatedMessage {
  id: string;
  from: string;
  to: string;
  subject?: string;
  text?: string;
  media: { url: string; content_type: string }[];
  /** The sender's own reference, by which it can look the message up. */
  client_ref?: string;
}

export type MmsSimulator = HttpChannelSimulator<MmsSimulatedMessage>;

/**
 * The generic MMS provider of mms-carrier.ts: `POST /v1/mms` answered 201
 * `{id}`, then signed delivery reports; `GET /v1/mms?client_ref=…` lists the
 * messages taken with that reference. Outcome by the recipient's last
 * digit: 9 sent, then failed; 7 taken (and delivered) but answered only after
 * lateAnswerMs, as a provider that stalls after committing; else sent, then
 * delivered.
 */
export function createMmsSimulator(options: MmsSimulatorOptions): MmsSimulator {
  return new Simulator(options);
}

class Simulator extends HttpChannelSimulatorBase<MmsSimulatedMessage, MmsSimulatorOptions> {
  protected async handle(req: JsonRequest): Promise<JsonResponse> {
    if (req.url.pathname !== '/v1/mms' || (req.method !== 'POST' && req.method !== 'GET')) return problem(404, 'not_found', 'no such resource');
    if (bearerToken(req.headers) !== this.o.token) return problem(401, 'unauthorized', 'invalid bearer token');
    if (req.method === 'GET') return this.lookup(req.url.searchParams.get('client_ref') ?? '');
    const parsed = readMms(req.body);
    if (typeof parsed === 'string') return problem(400, 'invalid_request', parsed);
    const message: MmsSimulatedMessage = { id: randomId(12), ...parsed };
    this.take(message);
    if (lastDigit(message.to) === '7') await this.delays.sleep(this.o.lateAnswerMs ?? 30_000);
    return { status: 201, body: { id: message.id } };
  }

  private lookup(clientRef: string): JsonResponse {
    if (!clientRef) return problem(400, 'invalid_request', 'client_ref is required');
    const found = this.received.filter((m) => m.client_ref === clientRef);
    return { status: 200, body: { messages: found.map((m) => ({ id: m.id, client_ref: clientRef, to: m.to })) } };
  }

  protected async report(m: MmsSimulatedMessage): Promise<void> {
    const at = this.timeline();
    await at(0);
    await this.post({ id: m.id, status: 'sent' });
    await at(this.deliverDelayMs);
    if (lastDigit(m.to) === '9') await this.post({ id: m.id, status: 'failed', error_code: 'unreachable' });
    else await this.post({ id: m.id, status: 'delivered' });
  }

  private post(report: { id: string; status: string; error_code?: string }): Promise<void> {
    const body = Buffer.from(JSON.stringify({ ...report, timestamp: new Date().toISOString() }));
    const signature = `sha256=${createHmac('sha256', this.o.webhookSecret).update(body).digest('hex')}`;
    return this.postWebhook(body, { 'x-signature': signature });
  }
}

/** The request's fields, or what is wrong with them. */
function readMms(body: unknown): Omit<MmsSimulatedMessage, 'id'> | string {
  if (!isRecord(body)) return 'the body must be a JSON object';
  const { from, to, subject, text, media, client_ref } = body;
  if (client_ref !== undefined && (typeof client_ref !== 'string' || client_ref.length > 64)) return 'client_ref must be a string of at most 64 characters';
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
  return { from, to, ...(subject ? { subject } : {}), ...(text ? { text } : {}), media: parts, ...(client_ref ? { client_ref } : {}) };
}

function problem(status: number, code: string, message: string): JsonResponse {
  return { status, body: { error: { code, message } } };
}
