import { EventEmitter } from 'node:events';
import {
  createDelays,
  createJsonServer,
  createWebhookPoster,
  keep,
  type JsonRequest,
  type JsonResponse,
  type JsonServer,
  type WebhookPoster,
} from './http-simulator-support';

/** What every HTTP carrier simulator (WhatsApp, RCS, MMS) is started with. */
export interface HttpChannelSimulatorOptions {
  host?: string;
  port?: number;
  /** The bearer token senders must present (RCS issues its own through OAuth instead). */
  token: string;
  /** Where status webhooks go (http or https; self-signed certificates are accepted). */
  webhookUrl: string;
  /** After the send, when delivery (or its failure) is reported. */
  deliverDelayMs?: number;
  /** Tries per webhook before it is given up (default: as many as 2 minutes take, as providers redeliver). */
  webhookAttempts?: number;
}

export interface HttpChannelSimulatorEvents<M> {
  message: [M];
  webhookFailed: [{ url: string; error: string }];
}

/** An HTTP carrier simulator as its users see it; `M` is a message as it took it. */
export interface HttpChannelSimulator<M> extends EventEmitter<HttpChannelSimulatorEvents<M>> {
  start(): Promise<{ port: number }>;
  /** Stops listening and drops the webhooks not yet posted. */
  stop(): Promise<void>;
  readonly port: number;
  /** The latest messages taken (at most MAX_KEPT_MESSAGES). */
  readonly received: M[];
}

/**
 * The life of an HTTP carrier simulator: a JSON server whose requests go to
 * `handle`, messages taken with `take` (kept, announced, then reported on by
 * `report` in the background), and webhooks posted with `postWebhook`, all of
 * which `stop()` cuts short. Each simulator adds its provider's API and
 * webhook shapes.
 */
export abstract class HttpChannelSimulatorBase<M, O extends Omit<HttpChannelSimulatorOptions, 'token'>>
  extends EventEmitter<HttpChannelSimulatorEvents<M>>
  implements HttpChannelSimulator<M>
{
  readonly received: M[] = [];
  protected readonly o: O;
  protected readonly deliverDelayMs: number;
  protected readonly delays = createDelays();
  private readonly poster: WebhookPoster;
  private readonly server: JsonServer;

  constructor(options: O) {
    super();
    this.o = options;
    this.deliverDelayMs = options.deliverDelayMs ?? 50;
    this.poster = createWebhookPoster({ attempts: options.webhookAttempts });
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

  /** May answer late (a promise), as a provider that took a message and then stalled. */
  protected abstract handle(req: JsonRequest): JsonResponse | Promise<JsonResponse>;

  /** The message's webhooks, in order, each at its time after the send. */
  protected abstract report(message: M): Promise<void>;

  /** Keeps and announces a message just sent, and starts reporting on it. */
  protected take(message: M): void {
    keep(this.received, message);
    this.emit('message', message);
    this.report(message).catch((err: unknown) => this.emit('webhookFailed', { url: this.o.webhookUrl, error: String(err) }));
  }

  /** Sleeps until `ms` after now (the send), however long the webhooks before took; never wakes once stopped. */
  protected timeline(): (ms: number) => Promise<void> {
    const started = Date.now();
    return (ms) => this.delays.sleep(ms - (Date.now() - started));
  }

  /** Posts one webhook unless stopped; a webhook given up is announced as `webhookFailed`. */
  protected async postWebhook(body: Buffer, headers: Record<string, string>): Promise<void> {
    if (this.delays.cancelled) return;
    const { ok, error } = await this.poster.post(this.o.webhookUrl, body, headers);
    if (!ok && !this.delays.cancelled) this.emit('webhookFailed', { url: this.o.webhookUrl, error });
  }
}
