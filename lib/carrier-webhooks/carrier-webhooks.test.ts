import { describe, expect, expectTypeOf, it } from 'vitest';
import type { MessageStatus } from '../../core/domain/message-status';
import type { CarrierReport, InboundMessage } from '../../workers/carrier';
import { CARRIER_WEBHOOKS } from './carrier-webhooks';
import { mmsWebhook } from './mms-webhook';
import { rcsWebhook } from './rcs-webhook';
import type { ReportedStatus, WebhookInbound, WebhookReport } from './webhook-handler';
import { whatsAppWebhook } from './whatsapp-webhook';

describe('carrier webhook registry', () => {
  it('has a handler for each HTTP channel', () => {
    expect(Object.keys(CARRIER_WEBHOOKS).sort()).toEqual(['mms', 'rcs', 'wab']);
    expect(CARRIER_WEBHOOKS).toEqual({ wab: whatsAppWebhook, rcs: rcsWebhook, mms: mmsWebhook });
    expect(Object.isFrozen(CARRIER_WEBHOOKS)).toBe(true);
  });

  it('reports only statuses core knows, in the shape a carrier reports them to its worker', () => {
    // lib/ may not import core's vocabulary, so the compiler checks here that the two agree.
    expectTypeOf<ReportedStatus>().toExtend<MessageStatus>();
    expectTypeOf<WebhookReport>().toExtend<CarrierReport>();
    expectTypeOf<WebhookInbound>().toExtend<InboundMessage>();
  });
});
