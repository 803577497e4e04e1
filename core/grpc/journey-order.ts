import { stageOf, type MessageStatus } from '../domain/message-status';

/**
 * One message's events in the order they happened, for the operator's
 * journey: by time, and within one second by stage. A carrier that stamps its
 * reports in whole seconds (WhatsApp's webhooks, the MMS provider's) dates a
 * delivery at the start of its second, before the `accepted` hermod stamped
 * 15 ms into it; a message only ever moves to a later stage, so within a
 * second the stage is the truer order. Equal keys keep the order given.
 */
export function inJourneyOrder<T extends { status: MessageStatus; at: number }>(events: readonly T[]): T[] {
  const second = (e: T): number => Math.floor(e.at / 1000);
  return [...events].sort((a, b) => second(a) - second(b) || stageOf(a.status) - stageOf(b.status) || a.at - b.at);
}
