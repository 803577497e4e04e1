import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { campaignMessageId } from '../campaigns/campaign-message-ids';
import { campaignOfMessage, isCampaignMessageId } from './campaign-message-id';

const LAYOUT = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-8000-0000[0-9a-f]{8}$/;

/** Ids near the layout: a campaign message id with one character changed, cut or added. */
const nearId = fc
  .tuple(
    fc.nat({ max: 2 ** 40 }),
    fc.nat({ max: 2 ** 32 - 1 }),
    fc.nat({ max: 40 }),
    fc.constantFrom('', 'A', 'g', '-', '8', '0', 'f', '/', ':', 'é', '٣'),
    fc.constantFrom('replace', 'cut', 'insert'),
  )
  .map(([campaign, position, at, ch, how]) => {
    const id = campaignMessageId(campaign + 1, position);
    if (how === 'cut') return id.slice(0, at) + id.slice(at + 1);
    if (how === 'insert') return id.slice(0, at) + ch + id.slice(at);
    return id.slice(0, at) + ch + id.slice(at + 1);
  });

describe('campaign message ids (property)', () => {
  it('are recognised exactly as the layout says, for campaign ids, ids near them, random UUIDs and any text', () => {
    fc.assert(
      fc.property(fc.oneof(nearId, fc.uuid(), fc.string({ maxLength: 40 }), fc.stringMatching(LAYOUT)), (id) => {
        expect(isCampaignMessageId(id)).toBe(LAYOUT.test(id));
      }),
      { numRuns: 5000 },
    );
  });

  it('give back the campaign they were made for', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 53 - 1 }).filter((c) => c < 16 ** 14),
        fc.nat({ max: 2 ** 32 - 1 }),
        (campaign, position) => {
          expect(campaignOfMessage(campaignMessageId(campaign, position))).toBe(campaign);
        },
      ),
    );
  });
});
