import { handsetKey } from '../domain/handset-key';
import { replyAddressKey } from './reply-address';
import { createHash } from 'node:crypto';
import type { HotState } from '../ports/state';
import type { InboundPayload } from '../ports/bus-payloads';

/**
 * What makes two inbound messages the same message delivered twice: channel,
 * source, destination, text and the carrier's references (the handset's
 * message reference, the concatenation reference). A carrier that did not
 * see our deliver_sm_resp sends the same deliver_sm again, often on another
 * bind and so to another worker; every field is then equal. JSON keeps the
 * fields apart whatever they contain, and the hash keeps the key short.
 *
 * Without a carrier reference, the same words are also what a person sends
 * again ("Yes" to a second question): `turn` names the last message the
 * address sent the handset, so words that answer a newer message are a new
 * reply. A carrier's redelivery comes before any such message.
 */
export function inboundKey(m: Pick<InboundPayload, 'channel' | 'source' | 'destination' | 'text' | 'carrierRef'>, turn = ''): string {
  const ref = m.carrierRef ?? '';
  return createHash('sha256')
    .update(JSON.stringify([m.channel, handsetKey(m.source), replyAddressKey(m.destination), m.text, ref, ref ? '' : turn]))
    .digest('base64url');
}

export interface InboundDelivery {
  key: string;
  /** The id the record gets if this is the first delivery. */
  candidateId: string;
  /** Where the bus holds this record (topic/partition/offset): the same on a bus redelivery. */
  busPosition: string;
}

/**
 * For each delivery, in order, the id of the MO record to write, or undefined
 * when another delivery of the same message was taken within `windowMs`.
 *
 * A claim in hot state names the bus position that made it and the record
 * id; when the bus hands the same record out again (core failed or stopped
 * after claiming), the claim is its own and it goes on with the same id, so
 * a crash loses no reply.
 */
export async function firstDeliveries(state: HotState, deliveries: readonly InboundDelivery[], windowMs: number): Promise<(string | undefined)[]> {
  // Claims are atomic in every adapter, so two copies within one batch may claim concurrently: one wins.
  return Promise.all(
    deliveries.map(async (d) => {
      const held = await state.claimIdempotencyKey(`mo:${d.key}`, `${d.busPosition} ${d.candidateId}`, d.candidateId, windowMs);
      if (!held) return d.candidateId;
      const space = held.fingerprint.lastIndexOf(' ');
      return held.fingerprint.slice(0, space) === d.busPosition ? held.fingerprint.slice(space + 1) : undefined;
    }),
  );
}
