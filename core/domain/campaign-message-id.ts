/**
 * Recognising a campaign message by its id (the layout is described in
 * core/campaigns/campaign-message-ids.ts): workers use it to honour an
 * operator's pause or cancel of the campaign a job belongs to.
 */
const HEX = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-8000-0000[0-9a-f]{8}$/;

export function isCampaignMessageId(id: string): boolean {
  return HEX.test(id);
}

/** The campaign a campaign message id belongs to (0 for any other id). */
export function campaignOfMessage(id: string): number {
  if (!isCampaignMessageId(id)) return 0;
  return parseInt(id.slice(0, 8) + id.slice(9, 13) + id.slice(15, 17), 16);
}
