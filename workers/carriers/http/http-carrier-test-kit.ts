import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { OutboundJob } from '../../../core/ports/bus-payloads';
import { eventually } from '../../../test/support/eventually';
import type { CarrierReport } from '../../carrier';
import { startWebhookReceiver, type WebhookReceiver } from '../../simulators/http-simulator-support';
import type { WebhookHandler } from '../../../lib/carrier-webhooks/webhook-handler';
import { hermodRejection } from '../../../test/support/hermod-rejection';

export { quietLog } from '../../simulators/smpp-test-kit';

/**
 * Test helpers for an HTTP carrier against its simulator: one webhook receiver
 * for the file (HTTPS with a self-signed certificate unless `tls: false`),
 * simulators stopped after each test, and the reports that arrived signed
 * with `secret`, as `webhook` verifies and parses them.
 */
export function httpCarrierTestKit(options: { tls: boolean; webhook: WebhookHandler; secret: string }) {
  const { webhook, secret } = options;
  let receiver: WebhookReceiver | undefined;
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver({ tls: options.tls });
  });
  afterAll(() => receiver?.close());
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });

  const webhooks = (): WebhookReceiver => {
    if (!receiver) throw new Error('the webhook receiver starts in beforeAll');
    return receiver;
  };

  /** Starts the simulator `create` makes, posting to the receiver; stopped after the test. */
  async function simulator<S extends { start(): Promise<unknown>; stop(): Promise<void> }>(create: (webhookUrl: string) => S): Promise<S> {
    const sim = create(webhooks().url);
    await sim.start();
    stops.push(() => sim.stop());
    return sim;
  }

  /** The verified, parsed webhooks received so far about one message. */
  function reportsFor(carrierId: string): CarrierReport[] {
    return webhooks()
      .received.filter((w) => webhook.verify(w.rawBody, w.headers, secret))
      .flatMap((w) => webhook.parse(JSON.parse(w.rawBody.toString('utf8'))))
      .filter((r) => r.carrierId === carrierId);
  }

  function reportsWithin(carrierId: string, count: number, ms = 1500): Promise<CarrierReport[]> {
    return eventually(() => (reportsFor(carrierId).length >= count ? reportsFor(carrierId) : undefined), ms);
  }

  return { simulator, reportsFor, reportsWithin, receiver: webhooks };
}

/** The HermodError a send failed with (the test fails if it did not fail with one). */
export const sendError = hermodRejection;

/** What a person writes: te reo Māori with macrons, Cyrillic, CJK, emoji with a skin-tone modifier. */
export const WORLD_TEXT = 'Kia ora, e hoa mā — tēnā koe! Привет, 你好世界 👋🏽🎉';

/** A job on an HTTP channel with a fresh id. */
export function imJob(channel: string, destination: string, im?: OutboundJob['im'], content = WORLD_TEXT): OutboundJob {
  return { id: `msg-${randomUUID()}`, applicationId: 'app', channel, destination, source: '', content, acceptedAt: Date.now(), ...(im ? { im } : {}) };
}
