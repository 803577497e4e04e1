import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { CarrierInboundRequest } from '../../proto/gen/hermod/v1/carrier_inbound';
import { HermodError } from '../../lib/errors';
import type { Bus } from '../ports/bus';
import { topicName } from '../ports/bus';
import { publishInParts } from '../ports/publish-in-parts';
import { encodeInbound } from '../ports/bus-payloads';
import { unaryHandler } from './unary-handler';
import { handsetKey } from '../domain/handset-key';

/** Channels whose carriers post handsets' messages to the gateway. */
const INBOUND_CHANNELS = new Set(['wab']);

/**
 * The CarrierInbound gRPC service: messages from handsets that the gateway
 * took from a carrier's webhook go onto the inbound topic, where core's
 * inbound consumer treats them as it treats SMS replies (dedup by the
 * carrier's reference, routing to the owning application, opt-out keywords,
 * the reply callback). Answered once the bus has them, so the gateway answers
 * the carrier 200 only then, and the carrier redelivers otherwise.
 */
export function carrierInboundService(deps: { bus: Bus }): UntypedServiceImplementation {
  return {
    reportInbound: unaryHandler('ReportInbound', async (req: CarrierInboundRequest) => {
      if (!INBOUND_CHANNELS.has(req.channel)) throw new HermodError('invalid_attrib', `no inbound messages on channel ${JSON.stringify(req.channel)}`);
      const messages = req.messages.filter((m) => m.source && m.destination);
      await publishInParts(
        deps.bus,
        topicName('inbound'),
        messages.map((m) => ({
          key: handsetKey(m.source),
          value: encodeInbound({
            source: m.source,
            destination: m.destination,
            text: m.text,
            at: m.at || Date.now(),
            channel: req.channel,
            carrierRef: m.carrierRef,
            businessId: m.businessId,
            quotedRef: m.quotedRef,
          }),
        })),
      );
      return { accepted: messages.length };
    }),
  };
}
