/**
 * Campaign message ids derive from (campaign, member position), so a fan-out
 * that is interrupted and resumed recreates exactly the ids it made before and
 * can see which members already have their message.
 *
 * The UUID form is a version-8 UUID (RFC 9562, custom layout): the first 16
 * hex digits hold the campaign id (14 digits) around the version nibble, the
 * last 8 the position. Every message of a campaign therefore shares one
 * prefix, and ids sort by position within it: a position range is an id
 * range, which both history tables (sorted by message id) read as one
 * contiguous slice. Other messages have random version-4 UUIDs.
 *
 * The numeric form (Campaign Manager report `message_id`, at most 2^53 - 1)
 * comes from a block the numeric id generator reserves for the campaign (see
 * numeric-ids.ts): 256 ids per reserved millisecond.
 */
export { campaignOfMessage, isCampaignMessageId } from '../domain/campaign-message-id';

export function campaignMessageId(campaignId: number, position: number): string {
  const c = campaignId.toString(16).padStart(14, '0');
  const p = position.toString(16).padStart(8, '0');
  return `${c.slice(0, 8)}-${c.slice(8, 12)}-8${c.slice(12, 14)}0-8000-0000${p}`;
}

export function positionOfCampaignMessage(id: string): number {
  return parseInt(id.slice(-8), 16);
}

/** Ids of the messages of positions [from, to), as a half-open id range. */
export function campaignMessageRange(campaignId: number, from: number, to: number): { lo: string; hi: string } {
  return { lo: campaignMessageId(campaignId, from), hi: campaignMessageId(campaignId, to) };
}

/** Numeric ids handed out per reserved millisecond, and the step between milliseconds (see numeric-ids.ts). */
const PER_MS = 256;
const MS_STEP = 4096;

export function campaignMessageNumericId(numericBase: number, position: number): number {
  return numericBase + Math.floor(position / PER_MS) * MS_STEP + (position % PER_MS);
}
