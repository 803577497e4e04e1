import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageStatus } from '../domain/message-status';
import type { HotState } from '../ports/state';
import { unique } from './contract-support';

export type StateFactory = () => HotState | Promise<HotState>;

/**
 * The behaviour every HotState adapter must show. Ids are unique per test, so
 * a factory may return clients of one shared store.
 */
export function describeStateContract(name: string, factory: StateFactory): void {
  describe(`HotState contract: ${name}`, () => {
    let state: HotState;

    beforeEach(async () => {
      state = await factory();
    });
    /** As core does once it has put the opt-outs and block lists of these scopes from history in. */
    const loaded = async (scopes: string[]): Promise<void> => {
      expect(await state.markScreeningLoaded(scopes, await state.beginScreeningLoad(scopes))).toBe(true);
    };

    it('says the opt-outs and block lists of every scope told so are loaded', async () => {
      const scopes = ['', unique('app'), unique('app')];
      await loaded(scopes);
      expect(await state.screeningMissing(scopes)).toEqual([]);
      expect(await state.areOptedOut(scopes.map((applicationId) => ({ applicationId, handset: '+64211234567' })))).toEqual(scopes.map(() => false));
      expect(await state.screeningRefused()).toEqual([]);
    });

    afterEach(async () => {
      await state.close();
    });

    it('knows no status for a message it has never seen', async () => {
      expect(await state.getStatus(unique('msg'))).toBeUndefined();
    });

    it('records the first status of a message with its time', async () => {
      const id = unique('msg');
      expect(await state.advanceStatuses([{ id, status: 'accepted', at: 1000 }])).toEqual([true]);
      expect(await state.getStatus(id)).toEqual({ status: 'accepted', at: 1000 });
    });

    it('moves a message forward through the stages', async () => {
      const id = unique('msg');
      for (const [i, status] of (['accepted', 'queued', 'sent', 'submitted', 'received', 'read'] as const).entries()) {
        expect(await state.advanceStatuses([{ id, status, at: 1000 + i }])).toEqual([true]);
      }
      expect(await state.getStatus(id)).toEqual({ status: 'read', at: 1005 });
    });

    it('says which advances skipped queued (a status reached only through the queue, applied to a message at accepted) and which came right after it', async () => {
      const [a, b, c, d, e, f] = ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => unique(`msg-${x}`)) as [string, string, string, string, string, string];
      await state.advanceStatuses([a, b, c, d, e].map((id) => ({ id, status: 'accepted' as const, at: 1000 })));
      await state.advanceStatuses([{ id: b, status: 'queued', at: 1001 }]);
      expect(
        await state.advanceStatusesNotingSkips([
          { id: a, status: 'sent', at: 1002 },
          { id: b, status: 'sent', at: 1002 },
          { id: c, status: 'blocked', at: 1002 },
          { id: d, status: 'read', at: 1002 },
          { id: e, status: 'accepted', at: 1003 },
          { id: f, status: 'submitted', at: 1002 },
          // Applied just before in this very call: the message is at sent now, not accepted.
          { id: a, status: 'submitted', at: 1004 },
        ]),
      ).toEqual([2, 3, 1, 2, 0, 1, 1]);
      expect(await state.getStatus(a)).toEqual({ status: 'submitted', at: 1004 });
      expect(await state.getStatus(d)).toEqual({ status: 'read', at: 1002 });
    });

    it('keeps a message at received when a late sent report arrives', async () => {
      const id = unique('msg');
      await state.advanceStatuses([{ id, status: 'received', at: 2000 }]);
      expect(await state.advanceStatuses([{ id, status: 'sent', at: 1500 }])).toEqual([false]);
      expect(await state.getStatus(id)).toEqual({ status: 'received', at: 2000 });
    });

    it("holds a carrier's receipt back while its message is not yet submitted, and applies it once it is", async () => {
      const id = unique('msg');
      await state.advanceStatuses([{ id, status: 'sent', at: 1 }]);
      expect(await state.advanceStatuses([{ id, status: 'received', at: 3, carrierId: 'c-1', onceSubmitted: true }])).toEqual([false]);
      expect(await state.getStatus(id)).toEqual({ status: 'sent', at: 1 });
      expect(await state.advanceStatuses([{ id, status: 'submitted', at: 2 }])).toEqual([true]);
      expect(await state.advanceStatuses([{ id, status: 'read', at: 4, carrierId: 'c-1', onceSubmitted: true }])).toEqual([true]);
      // A message hot state does not know (it let it go, or restarted) takes the receipt only once its status is read
      // back from history (the caller's part), or without onceSubmitted once the caller has waited for its submit.
      const unknown = unique('msg');
      expect(await state.advanceStatuses([{ id: unknown, status: 'received', at: 5, onceSubmitted: true }])).toEqual([false]);
      expect(await state.getStatus(unknown)).toBeUndefined();
      expect(await state.advanceStatuses([{ id: unknown, status: 'received', at: 5 }])).toEqual([true]);
    });

    it('does not apply a duplicate of the current status', async () => {
      const id = unique('msg');
      expect(await state.advanceStatuses([{ id, status: 'submitted', at: 1 }])).toEqual([true]);
      expect(await state.advanceStatuses([{ id, status: 'submitted', at: 2 }])).toEqual([false]);
      expect(await state.getStatus(id)).toEqual({ status: 'submitted', at: 1 });
    });

    it('turns a received e-mail failed when its bounce comes later (the relay took it, the recipient’s server did not)', async () => {
      const id = unique('msg');
      await state.advanceStatuses([{ id, status: 'received', at: 1, channel: 'email' }]);
      expect(await state.advanceStatuses([{ id, status: 'failed', at: 2, channel: 'email' }])).toEqual([true]);
      expect(await state.getStatus(id)).toEqual({ status: 'failed', at: 2 });
      expect(await state.advanceStatuses([{ id, status: 'received', at: 3, channel: 'email' }])).toEqual([false]);
    });

    it('keeps a received SMS, WhatsApp or RCS message received when a failure report for it comes later (a carrier’s second, conflicting receipt)', async () => {
      for (const channel of ['sms', 'wab', 'rcs', 'mms', undefined]) {
        const id = unique(`msg-${channel}`);
        await state.advanceStatuses([{ id, status: 'received', at: 1, channel }]);
        expect(await state.advanceStatuses([{ id, status: 'failed', at: 2, channel, carrierId: 'c-tēnā-✅', onceSubmitted: true }]), channel).toEqual([false]);
        expect(await state.advanceStatuses([{ id, status: 'failed', at: 3, channel }]), channel).toEqual([false]);
        expect(await state.getStatus(id), channel).toEqual({ status: 'received', at: 1 });
      }
    });

    it('does not move between final statuses', async () => {
      const id = unique('msg');
      await state.advanceStatuses([{ id, status: 'failed', at: 1 }]);
      expect(
        await state.advanceStatuses([
          { id, status: 'received', at: 2 },
          { id, status: 'read', at: 3 },
        ]),
      ).toEqual([false, false]);
      expect((await state.getStatus(id))?.status).toBe('failed');
    });

    it('answers each advance of a batch in order, applying them one after another', async () => {
      const a = unique('msg');
      const b = unique('msg');
      const applied = await state.advanceStatuses([
        { id: a, status: 'accepted', at: 1 },
        { id: b, status: 'sent', at: 1 },
        { id: a, status: 'accepted', at: 2 },
        { id: a, status: 'queued', at: 3 },
        { id: b, status: 'queued', at: 4 },
      ]);
      expect(applied).toEqual([true, true, false, true, false]);
      expect(await state.getStatus(a)).toEqual({ status: 'queued', at: 3 });
      expect(await state.getStatus(b)).toEqual({ status: 'sent', at: 1 });
    });

    it('lets exactly one of many concurrent writers apply the same status, and ends at the furthest stage', async () => {
      const id = unique('msg');
      const statuses: MessageStatus[] = ['accepted', 'queued', 'sent', 'submitted', 'received'];
      const writes = Array.from({ length: 60 }, (_, i) => statuses[(i * 7) % statuses.length]!);
      const results = await Promise.all(writes.map((status, i) => state.advanceStatuses([{ id, status, at: 100 + i }])));

      expect(await state.getStatus(id).then((s) => s?.status)).toBe('received');
      const appliedReceived = results.filter((r, i) => r[0] && writes[i] === 'received');
      expect(appliedReceived).toHaveLength(1);
      // Never more applied advances than there are stages to move through.
      expect(results.filter((r) => r[0]).length).toBeLessThanOrEqual(statuses.length);
    });

    it('keeps concurrent writers to different messages apart', async () => {
      const ids = Array.from({ length: 40 }, () => unique('msg'));
      await Promise.all(ids.map((id, i) => state.advanceStatuses([{ id, status: i % 2 ? 'sent' : 'queued', at: i }])));
      const read = await Promise.all(ids.map((id) => state.getStatus(id)));
      read.forEach((entry, i) => {
        expect(entry).toEqual({ status: i % 2 ? 'sent' : 'queued', at: i });
      });
    });

    it('maps carrier message ids to our message ids', async () => {
      const [m1, m2] = [unique('msg'), unique('msg')];
      const [c1, c2, c3] = [unique('carrier'), unique('carrier'), unique('carrier')];
      await state.putCarrierIds([
        { carrierId: c1, messageId: m1 },
        { carrierId: c2, messageId: m2 },
        { carrierId: c3, messageId: m2 },
      ]);
      expect(await state.getMessageIdByCarrierId(c1)).toBe(m1);
      expect(await state.getMessageIdByCarrierId(c2)).toBe(m2);
      expect(await state.getMessageIdByCarrierId(c3)).toBe(m2);
      expect(await state.getMessageIdByCarrierId(unique('carrier'))).toBeUndefined();
      expect(await state.wereSubmitted([m1, unique('message'), m2])).toEqual([true, false, true]);
    });

    it('tells a message sent in parts delivered only once each of its parts was, however often a part is reported', async () => {
      const [long, short] = [unique('msg'), unique('msg')];
      const [p1, p2, p3, single] = [unique('carrier'), unique('carrier'), unique('carrier'), unique('carrier')];
      await state.putCarrierIds([
        { carrierId: p1, messageId: long },
        { carrierId: p2, messageId: long },
        { carrierId: p3, messageId: long },
        { carrierId: single, messageId: short },
      ]);
      const delivered = (messageId: string, carrierId: string) => state.deliveredWhole([{ messageId, carrierId }]);
      expect(await delivered(long, p2)).toEqual([false]);
      expect(await delivered(long, p2)).toEqual([false]);
      expect(
        await state.deliveredWhole([
          { messageId: long, carrierId: p1 },
          { messageId: short, carrierId: single },
        ]),
      ).toEqual([false, true]);
      expect(await delivered(long, p3)).toEqual([true]);
      // A message hot state knows no parts of is taken as whole: one sent before this was kept, or one it forgot.
      expect(await delivered(unique('msg'), unique('carrier'))).toEqual([true]);
      expect(await state.deliveredWhole([])).toEqual([]);
    });

    it('lets one worker’s try at a time claim the sending of a message, until it gives the claim up or the claim runs out', async () => {
      const [m1, m2] = [unique('msg'), unique('msg')];
      expect(await state.claimSends([{ messageId: m1, token: 'kaimahi-1' }], 300)).toEqual([true]);
      expect(
        await state.claimSends(
          [
            { messageId: m1, token: 'kaimahi-2' },
            { messageId: m2, token: 'kaimahi-2' },
          ],
          300,
        ),
      ).toEqual([false, true]);
      // The holder renews its own claim; another's release does not free it.
      expect(await state.claimSends([{ messageId: m1, token: 'kaimahi-1' }], 300)).toEqual([true]);
      await state.releaseSends([{ messageId: m1, token: 'kaimahi-2' }]);
      expect(await state.claimSends([{ messageId: m1, token: 'kaimahi-2' }], 300)).toEqual([false]);
      await state.releaseSends([{ messageId: m1, token: 'kaimahi-1' }]);
      expect(await state.claimSends([{ messageId: m1, token: 'kaimahi-2' }], 300)).toEqual([true]);
      // A claim whose worker died runs out.
      await new Promise((r) => setTimeout(r, 400));
      expect(await state.claimSends([{ messageId: m2, token: 'kaimahi-3' }], 300)).toEqual([true]);
      expect(await state.claimSends([], 300)).toEqual([]);
    });

    it('remembers which messages must no longer be sent, and only those', async () => {
      const [m1, m2, m3] = [unique('msg'), unique('msg'), unique('msg')];
      expect(await state.wereCancelled([m1, m2])).toEqual([false, false]);
      await state.cancelSends([m1, m3]);
      await state.cancelSends([m1]);
      expect(await state.wereCancelled([m1, m2, m3])).toEqual([true, false, true]);
      await state.cancelSends([]);
      expect(await state.wereCancelled([])).toEqual([]);
    });

    it('pauses a campaign: messages parked while it is paused come back once, when it runs again', async () => {
      const campaign = 1 + Math.floor(Math.random() * 2 ** 40);
      const [m1, m2] = [unique('msg'), unique('msg')];
      expect(await state.campaignControls([campaign])).toEqual(['running']);
      expect(await state.parkCampaignMessages(campaign, [m1])).toBe('running');
      expect(await state.setCampaignControl(campaign, 'paused')).toEqual([]);
      expect(await state.campaignControls([campaign, campaign + 1])).toEqual(['paused', 'running']);
      expect(await state.parkCampaignMessages(campaign, [m1])).toBe('paused');
      expect(await state.parkCampaignMessages(campaign, [m2, m1])).toBe('paused');
      expect((await state.setCampaignControl(campaign, 'running')).sort()).toEqual([m1, m2].sort());
      expect(await state.parkCampaignMessages(campaign, [m1])).toBe('running');
      expect(await state.setCampaignControl(campaign, 'running')).toEqual([]);
    });

    it('cancels a campaign: the parked messages are handed back to be ended, and nothing parks any more', async () => {
      const campaign = 1 + Math.floor(Math.random() * 2 ** 40);
      const m1 = unique('msg');
      await state.setCampaignControl(campaign, 'paused');
      await state.parkCampaignMessages(campaign, [m1]);
      expect(await state.setCampaignControl(campaign, 'cancelled')).toEqual([m1]);
      expect(await state.parkCampaignMessages(campaign, [unique('msg')])).toBe('cancelled');
      expect(await state.campaignControls([campaign])).toEqual(['cancelled']);
    });

    it('claims an idempotency key once, then returns what it holds until it is released', async () => {
      const key = unique('idem-kia-ora-👋🏽');
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'claim-1', 60_000)).toBeUndefined();
      expect(await state.claimIdempotencyKey(key, 'fp-2', 'claim-2', 60_000)).toEqual({ fingerprint: 'fp-1' });
      expect(await state.completeIdempotencyKey(key, 'claim-1', { fingerprint: 'fp-1', response: '{"status":202}' }, 60_000)).toBe(true);
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'claim-3', 60_000)).toEqual({ fingerprint: 'fp-1', response: '{"status":202}' });
      await state.releaseIdempotencyKey(key, 'claim-1');
      // An answer stays once given: release undoes a claim, not an answer.
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'claim-4', 60_000)).toEqual({ fingerprint: 'fp-1', response: '{"status":202}' });
      const failed = unique('idem-你好');
      await state.claimIdempotencyKey(failed, 'fp-1', 'claim-1', 60_000);
      await state.releaseIdempotencyKey(failed, 'claim-1');
      expect(await state.claimIdempotencyKey(failed, 'fp-3', 'claim-2', 60_000)).toBeUndefined();
    });

    it('lets only one of many concurrent claims of a key win', async () => {
      const key = unique('idem');
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => state.claimIdempotencyKey(key, `fp-${i}`, `claim-${i}`, 60_000)));
      expect(results.filter((r) => r === undefined)).toHaveLength(1);
    });

    it('forgets an idempotency key after its time to live', async () => {
      const key = unique('idem');
      await state.claimIdempotencyKey(key, 'fp', 'claim-1', 30);
      await new Promise((r) => setTimeout(r, 80));
      expect(await state.claimIdempotencyKey(key, 'fp-again', 'claim-2', 60_000)).toBeUndefined();
    });

    it('keeps a renewed idempotency claim past its first lease', async () => {
      const key = unique('idem-tēnā-koe');
      await state.claimIdempotencyKey(key, 'fp-1', 'claim-1', 1000);
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setTimeout(r, 300));
        expect(await state.renewIdempotencyKey(key, 'claim-1', 1000)).toBe(true);
      }
      // 1.2 s after the claim, past its first lease of 1 s (a renewal may be late by most of a lease on a busy machine).
      expect(await state.claimIdempotencyKey(key, 'fp-2', 'claim-2', 60_000)).toEqual({ fingerprint: 'fp-1' });
      expect(await state.completeIdempotencyKey(key, 'claim-1', { fingerprint: 'fp-1', response: '{"body":"Kia ora, e hoa mā"}' }, 60_000)).toBe(true);
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'claim-3', 60_000)).toEqual({ fingerprint: 'fp-1', response: '{"body":"Kia ora, e hoa mā"}' });
    });

    it('does not renew, complete or release a claim whose lease ran out and whose key another request claimed', async () => {
      const key = unique('idem');
      await state.claimIdempotencyKey(key, 'fp-1', 'stale', 30);
      await new Promise((r) => setTimeout(r, 80));
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'live', 60_000)).toBeUndefined();
      expect(await state.renewIdempotencyKey(key, 'stale', 60_000)).toBe(false);
      await state.releaseIdempotencyKey(key, 'stale');
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'retry', 60_000)).toEqual({ fingerprint: 'fp-1' });
      expect(await state.completeIdempotencyKey(key, 'stale', { fingerprint: 'fp-1', response: '"stale 👋🏽"' }, 60_000)).toBe(false);
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'retry', 60_000)).toEqual({ fingerprint: 'fp-1' });
      expect(await state.completeIdempotencyKey(key, 'live', { fingerprint: 'fp-1', response: '"live 你好"' }, 60_000)).toBe(true);
      // Nor overwrite the answer of the claim that holds the key.
      expect(await state.completeIdempotencyKey(key, 'stale', { fingerprint: 'fp-1', response: '"stale 👋🏽"' }, 60_000)).toBe(false);
      await state.releaseIdempotencyKey(key, 'stale');
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'retry', 60_000)).toEqual({ fingerprint: 'fp-1', response: '"live 你好"' });
    });

    it('completes and releases for a gateway from before claim ids (an empty claim id) as before them, and never renews for it', async () => {
      const answered = unique('idem-legacy');
      await state.claimIdempotencyKey(answered, 'fp-1', 'claim-1', 60_000);
      expect(await state.renewIdempotencyKey(answered, '', 60_000)).toBe(false);
      expect(await state.completeIdempotencyKey(answered, '', { fingerprint: 'fp-1', response: '"Kia ora 👋🏽"' }, 60_000)).toBe(true);
      expect(await state.claimIdempotencyKey(answered, 'fp-1', 'claim-2', 60_000)).toEqual({ fingerprint: 'fp-1', response: '"Kia ora 👋🏽"' });
      const failed = unique('idem-legacy');
      await state.claimIdempotencyKey(failed, 'fp-1', 'claim-1', 60_000);
      await state.releaseIdempotencyKey(failed, '');
      expect(await state.claimIdempotencyKey(failed, 'fp-1', 'claim-2', 60_000)).toBeUndefined();
      // Nor does it release an answer.
      await state.releaseIdempotencyKey(answered, '');
      expect(await state.claimIdempotencyKey(answered, 'fp-1', 'claim-3', 60_000)).toEqual({ fingerprint: 'fp-1', response: '"Kia ora 👋🏽"' });
    });

    it('answers a repeated complete of the claim that stored the answer as stored, and keeps that answer', async () => {
      const key = unique('idem');
      await state.claimIdempotencyKey(key, 'fp-1', 'claim-1', 60_000);
      expect(await state.completeIdempotencyKey(key, 'claim-1', { fingerprint: 'fp-1', response: '"first"' }, 60_000)).toBe(true);
      expect(await state.completeIdempotencyKey(key, 'claim-1', { fingerprint: 'fp-1', response: '"first"' }, 60_000)).toBe(true);
      expect(await state.renewIdempotencyKey(key, 'claim-1', 60_000)).toBe(false);
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'claim-2', 60_000)).toEqual({ fingerprint: 'fp-1', response: '"first"' });
    });

    it('stores the answer of a claim whose lease ran out while nobody else claimed the key', async () => {
      const key = unique('idem');
      await state.claimIdempotencyKey(key, 'fp-1', 'late', 30);
      await new Promise((r) => setTimeout(r, 80));
      expect(await state.renewIdempotencyKey(key, 'late', 60_000)).toBe(false);
      expect(await state.completeIdempotencyKey(key, 'late', { fingerprint: 'fp-1', response: '"late but only"' }, 60_000)).toBe(true);
      expect(await state.claimIdempotencyKey(key, 'fp-1', 'retry', 60_000)).toEqual({ fingerprint: 'fp-1', response: '"late but only"' });
    });

    it('remembers the last message sent to each handset', async () => {
      const handset = `+64${Math.floor(Math.random() * 1e9)}`;
      expect(await state.getLastMessage(handset)).toBeUndefined();
      await state.rememberLastMessages([{ handset, messageId: 'm1', applicationId: 'a1', source: '' }]);
      await state.rememberLastMessages([{ handset, messageId: 'm2', applicationId: 'a2', source: '' }]);
      expect(await state.getLastMessage(handset)).toEqual({ messageId: 'm2', applicationId: 'a2' });
    });

    it('tells apart the last message to a handset from each address it was sent from', async () => {
      const handset = `+64${Math.floor(Math.random() * 1e9)}`;
      const [codeA, codeB] = [unique('4001'), unique('MASK')];
      await state.rememberLastMessages([
        { handset, messageId: 'm1', applicationId: 'app-a', source: codeA },
        { handset, messageId: 'm2', applicationId: 'app-b', source: codeB },
      ]);
      expect(await state.getReplyContext(handset, codeA)).toEqual({
        lastToHandset: { messageId: 'm2', applicationId: 'app-b' },
        lastFromAddress: { messageId: 'm1', applicationId: 'app-a' },
        sendersOfAddress: ['app-a'],
      });
      expect((await state.getReplyContext(handset, codeB)).lastFromAddress).toEqual({ messageId: 'm2', applicationId: 'app-b' });
      const stranger = await state.getReplyContext(`${handset}9`, codeA);
      expect(stranger).toMatchObject({ lastToHandset: undefined, lastFromAddress: undefined, sendersOfAddress: ['app-a'] });
      expect(await state.getReplyContext(handset, unique('unknown'))).toMatchObject({ lastFromAddress: undefined, sendersOfAddress: [] });
    });

    it('lists every application that sends from a shared address once, and the last of them to message each handset', async () => {
      const code = unique('shared');
      await state.rememberLastMessages([
        { handset: '+641', messageId: 'm1', applicationId: 'app-a', source: code },
        { handset: '+642', messageId: 'm2', applicationId: 'app-b', source: code },
        { handset: '+641', messageId: 'm3', applicationId: 'app-a', source: code },
      ]);
      const context = await state.getReplyContext('+642', code);
      expect([...context.sendersOfAddress].sort()).toEqual(['app-a', 'app-b']);
      expect(context.lastFromAddress).toEqual({ messageId: 'm2', applicationId: 'app-b' });
      expect((await state.getReplyContext('+641', code)).lastFromAddress).toEqual({ messageId: 'm3', applicationId: 'app-a' });
    });

    it('learns which applications sent from an address, and when, from what history says they sent', async () => {
      const code = unique('5100');
      const now = Date.now();
      await state.rememberSenders([
        { address: code, applicationId: 'app-a', at: now - 60_000 },
        { address: code, applicationId: 'app-b', at: now - 120_000 },
      ]);
      expect([...(await state.getReplyContext('+6423000202', code)).sendersOfAddress].sort()).toEqual(['app-a', 'app-b']);
      // A send long past the state's time to live is not a sender any more.
      const stale = unique('5200');
      await state.rememberSenders([{ address: stale, applicationId: 'app-a', at: now - 400 * 24 * 60 * 60 * 1000 }]);
      expect((await state.getReplyContext('+6423000202', stale)).sendersOfAddress).toEqual([]);
    });

    it('grants at most the limit per one-second window, and keeps each key apart', async () => {
      const [key, other] = [unique('rate'), unique('rate')];
      // Start early in a window, so the takes below cannot straddle two of them.
      const first = await state.takeRateTokens(unique('probe'), 1, 1);
      if (first.windowEndsInMs < 600) await new Promise((r) => setTimeout(r, first.windowEndsInMs + 20));
      const a = await state.takeRateTokens(key, 5, 3);
      expect(a.granted).toBe(3);
      expect(a.windowEndsInMs).toBeGreaterThan(0);
      expect(a.windowEndsInMs).toBeLessThanOrEqual(1000);
      expect((await state.takeRateTokens(key, 5, 3)).granted).toBe(2);
      expect((await state.takeRateTokens(key, 5, 1)).granted).toBe(0);
      expect((await state.takeRateTokens(other, 5, 5)).granted).toBe(5);
    });

    it('grants no more than the limit to many concurrent takers, and a new allowance in the next window', async () => {
      const key = unique('rate');
      const first = await state.takeRateTokens(unique('probe'), 1, 1);
      if (first.windowEndsInMs < 600) await new Promise((r) => setTimeout(r, first.windowEndsInMs + 20));
      const grants = await Promise.all(Array.from({ length: 30 }, () => state.takeRateTokens(key, 20, 2)));
      const total = grants.reduce((sum, g) => sum + g.granted, 0);
      expect(total).toBe(20);
      await new Promise((r) => setTimeout(r, grants[0]!.windowEndsInMs + 20));
      expect((await state.takeRateTokens(key, 20, 4)).granted).toBe(4);
    });

    it('keeps opt-outs per application and handset, and lets a handset opt back in', async () => {
      const app = `app-${Math.random().toString(36).slice(2)}`;
      await loaded([app, `${app}-other`]);
      await state.setOptOuts([{ applicationId: app, handset: '+641', optedOut: true }]);
      expect(
        await state.areOptedOut([
          { applicationId: app, handset: '+641' },
          { applicationId: app, handset: '+642' },
          { applicationId: `${app}-other`, handset: '+641' },
        ]),
      ).toEqual([true, false, false]);
      await state.setOptOuts([{ applicationId: app, handset: '+641', optedOut: false }]);
      expect(await state.areOptedOut([{ applicationId: app, handset: '+641' }])).toEqual([false]);
    });

    it('takes a number written without its plus, or with spaces, as the same handset for opt-outs', async () => {
      const app = `app-${Math.random().toString(36).slice(2)}`;
      const digits = `6421${Math.floor(Math.random() * 1e6)}`;
      await loaded([app]);
      // The handset replied STOP: its number came from the carrier without the plus.
      await state.setOptOuts([{ applicationId: app, handset: digits, optedOut: true }]);
      expect(
        await state.areOptedOut([
          { applicationId: app, handset: `+${digits}` },
          { applicationId: app, handset: digits },
          { applicationId: app, handset: `+${digits.slice(0, 2)} ${digits.slice(2, 4)} ${digits.slice(4)}` },
          { applicationId: app, handset: `0${digits.slice(2)}` },
        ]),
      ).toEqual([true, true, true, false]);
      await state.setOptOuts([{ applicationId: app, handset: `+${digits}`, optedOut: false }]);
      expect(await state.areOptedOut([{ applicationId: app, handset: digits }])).toEqual([false]);
    });

    it('routes by the last message to a handset however the send and the reply wrote its number', async () => {
      const digits = `6421${Math.floor(Math.random() * 1e6)}`;
      const code = unique('4001');
      await state.rememberLastMessages([{ handset: digits, messageId: 'm1', applicationId: 'app-a', source: code }]);
      expect(await state.getLastMessage(`+${digits}`)).toEqual({ messageId: 'm1', applicationId: 'app-a' });
      expect(await state.getReplyContext(`+${digits}`, code)).toMatchObject({
        lastToHandset: { messageId: 'm1', applicationId: 'app-a' },
        lastFromAddress: { messageId: 'm1', applicationId: 'app-a' },
      });
      // An address that is not a number is kept as written.
      const email = `Tēnā.Koe+${Math.floor(Math.random() * 1e6)}@example.nz`;
      await state.rememberLastMessages([{ handset: email, messageId: 'm2', applicationId: 'app-b', source: '' }]);
      expect(await state.getLastMessage(email)).toEqual({ messageId: 'm2', applicationId: 'app-b' });
    });

    it('grants exactly the quota to N + 1 concurrent takers of one, and nothing more once it is used up', async () => {
      const key = unique('quota');
      const limit = 25;
      const grants = await Promise.all(Array.from({ length: limit + 1 }, () => state.takeQuota([{ key, limit, wanted: 1, ttlMs: 60_000 }])));
      expect(grants.reduce((sum, [g]) => sum + g!, 0)).toBe(limit);
      expect(await state.takeQuota([{ key, limit, wanted: 1, ttlMs: 60_000 }])).toEqual([0]);
    });

    it('grants part of a batch that outgrows the quota, keeps counters apart and starts a new one when the old one expires', async () => {
      const [key, other] = [unique('quota'), unique('quota')];
      expect(
        await state.takeQuota([
          { key, limit: 5, wanted: 3, ttlMs: 150 },
          { key, limit: 5, wanted: 3, ttlMs: 150 },
          { key: other, limit: 5, wanted: 5, ttlMs: 150 },
          { key, limit: 5, wanted: 1, ttlMs: 150 },
        ]),
      ).toEqual([3, 2, 5, 0]);
      await new Promise((r) => setTimeout(r, 250));
      expect(await state.takeQuota([{ key, limit: 5, wanted: 4, ttlMs: 150 }])).toEqual([4]);
      expect(await state.takeQuota([])).toEqual([]);
    });

    it('starts a new quota counter from its seed (the period’s earlier sends), and keeps a counter’s count whatever a later seed says', async () => {
      const [key, other] = [unique('quota'), unique('quota')];
      expect(await state.takeQuota([{ key, limit: 10, wanted: 5, ttlMs: 60_000, seed: 7 }])).toEqual([3]);
      expect(await state.takeQuota([{ key, limit: 10, wanted: 1, ttlMs: 60_000, seed: 0 }])).toEqual([0]);
      // Seeded at or over its limit: nothing granted, and the count is kept for the next taker without a seed.
      expect(await state.takeQuota([{ key: other, limit: 4, wanted: 2, ttlMs: 60_000, seed: 4 }])).toEqual([0]);
      expect(await state.takeQuota([{ key: other, limit: 5, wanted: 2, ttlMs: 60_000 }])).toEqual([1]);
    });

    it('blocks a destination by the longest listed prefix of its application or the global list, and only while listed', async () => {
      const [app, other] = [unique('app'), unique('app')];
      await loaded(['', app, other]);
      await state.setBlocks([
        { scope: '', prefix: '+6421', blocked: true },
        { scope: app, prefix: '+64211234', blocked: true },
        { scope: app, prefix: '+4420', blocked: true },
      ]);
      const sends = [
        { applicationId: app, destination: '+642112345678' },
        { applicationId: other, destination: '+642112345678' },
        { applicationId: other, destination: '+442079460000' },
        { applicationId: app, destination: '+442079460000' },
        { applicationId: app, destination: '+6427555' },
        { applicationId: app, destination: 'tēnā-koe@example.nz' },
      ];
      expect(await state.findBlocks(sends)).toEqual(['+64211234', '+6421', undefined, '+4420', undefined, undefined]);
      await state.setBlocks([
        { scope: '', prefix: '+6421', blocked: false },
        { scope: app, prefix: '+4420', blocked: false },
      ]);
      expect(await state.findBlocks(sends)).toEqual(['+64211234', undefined, undefined, undefined, undefined, undefined]);
      expect(await state.findBlocks([])).toEqual([]);
      await state.setBlocks([{ scope: app, prefix: '+64211234', blocked: false }]);
    });

    it("keeps each reporter's latest carrier snapshots until they expire", async () => {
      const [one, two] = [unique('worker'), unique('worker')];
      const bind = {
        channel: 'sms',
        bind: 'hermod@smsc.localhost:2775',
        up: true,
        windowInUse: 3,
        windowSize: 256,
        submitsPerSecond: 12.5,
        lastError: '',
        lastErrorAt: 0,
      };
      await state.putCarrierSnapshots(one, [{ ...bind, up: false, lastError: 'bind refused: Kia ora — tēnā koe 👋🏽', lastErrorAt: 5 }], 60_000);
      await state.putCarrierSnapshots(one, [bind], 60_000);
      await state.putCarrierSnapshots(two, [{ ...bind, bind: 'second@smsc.localhost:2775' }], 1);
      await new Promise((r) => setTimeout(r, 20));
      const mine = (await state.listCarrierSnapshots()).filter((s) => s.reporter === one || s.reporter === two);
      expect(mine).toEqual([{ ...bind, reporter: one, reportedAt: expect.any(Number) }]);
    });

    it('accepts empty batches', async () => {
      expect(await state.advanceStatuses([])).toEqual([]);
      await state.putCarrierIds([]);
    });
  });
}
