import { hashedUuid } from '../../lib/uuid';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageStatus } from '../domain/message-status';
import type { ApplicationRecord } from '../ports/account-store';
import type { History } from '../ports/history';
import type { MessageRecord, StatusEvent } from '../ports/message-history';
import { partRows, takenPartRows } from '../ports/part-rows';
import type { CampaignRecord, KeyedImport, ListRecord } from '../ports/campaign-store';
import { campaignMessageId, campaignMessageRange } from '../campaigns/campaign-message-ids';
import { referenceReportJson } from '../../test/support/report-json-reference';

/**
 * A store the contract can open, close and open again (to check durability),
 * and throw away at the end of each test.
 */
interface HistoryHarness {
  /** Opens the store; called again after close() it must reach the same data. */
  open(): Promise<History>;
  /** Removes the store (after the last History of it has been closed). */
  dispose(): Promise<void>;
  /** Runs statements on the store's database while no History has it open (to shape it as an older version left it). */
  exec(statements: readonly string[]): Promise<void>;
}

type HistoryHarnessFactory = () => HistoryHarness | Promise<HistoryHarness>;

/** Far enough from the suite's clock to be distinct, close enough to sit inside any recovery window. */
const BASE = Date.now() - 60 * 60 * 1000;

let nextNumericId = Date.now() * 16;

export function message(overrides: Partial<MessageRecord> = {}): MessageRecord {
  return {
    id: randomUUID(),
    numericId: nextNumericId++,
    replyTo: '',
    applicationId: 'app-one',
    channel: 'sms',
    direction: 'MT',
    destination: '+4915112345678',
    source: 'HERMOD',
    content: 'Kia ora, e hoa mā ✓ "quoted" \\ back\nslash — Привет, 你好世界 👋🏽🎉',
    reference: 'заказ-1 — 订单',
    messageClass: 'promotional',
    mask: 'Tienda Ñ',
    smsClass: 1,
    scheduledAt: 0,
    integrationId: 'int-9',
    via: 'sms_v2',
    segments: 2,
    acceptedAt: BASE,
    ...overrides,
  };
}

export function event(m: MessageRecord, status: MessageStatus, at: number, overrides: Partial<StatusEvent> = {}): StatusEvent {
  return { messageId: m.id, applicationId: m.applicationId, status, at, detail: '', carrierId: '', errorCode: '', ...overrides };
}

const accepted = (m: MessageRecord): StatusEvent => event(m, 'accepted', m.acceptedAt);

/** The behaviour every History adapter must show; each test gets an empty store from the harness. */
export function describeHistoryContract(name: string, createHarness: HistoryHarnessFactory): void {
  describe(`History contract: ${name}`, () => {
    let harness: HistoryHarness;
    let history: History;

    beforeEach(async () => {
      harness = await createHarness();
      history = await harness.open();
    });

    afterEach(async () => {
      await history.close();
      await harness.dispose();
    });

    it('returns a stored message with every field and its latest status', async () => {
      const m = message({ direction: 'MO', scheduledAt: BASE + 3_600_000, smsClass: 3, segments: 4 });
      await history.insertMessages([m], [accepted(m)]);
      await history.appendEvents([event(m, 'queued', BASE + 5), event(m, 'sent', BASE + 9)]);

      expect(await history.getMessage(m.applicationId, m.id)).toEqual({ ...m, status: 'sent', statusAt: BASE + 9 });
    });

    it('returns a message just inserted with its first status', async () => {
      const m = message({ acceptedAt: BASE + 123 });
      await history.insertMessages([m], [accepted(m)]);
      expect(await history.getMessage(m.applicationId, m.id)).toMatchObject({ id: m.id, status: 'accepted', statusAt: BASE + 123 });
    });

    it('reads a message stored without any event as accepted at its acceptance time', async () => {
      const m = message({ acceptedAt: BASE + 42 });
      await history.insertMessages([m], []);
      expect(await history.getMessage(m.applicationId, m.id)).toEqual({ ...m, status: 'accepted', statusAt: BASE + 42 });
    });

    it('does not return a message to another application, nor an unknown id', async () => {
      const m = message();
      await history.insertMessages([m], [accepted(m)]);

      expect(await history.getMessage('app-two', m.id)).toBeUndefined();
      expect(await history.getMessage(m.applicationId, randomUUID())).toBeUndefined();
      expect(await history.getMessage(m.applicationId, "' OR 1=1 --")).toBeUndefined();
    });

    it('finds a message by its numeric id, only for its own application', async () => {
      const m = message();
      await history.insertMessages([m, message()], [accepted(m)]);
      expect(await history.getMessageByNumericId(m.applicationId, m.numericId)).toMatchObject({ id: m.id, numericId: m.numericId, status: 'accepted' });
      expect(await history.getMessageByNumericId('app-two', m.numericId)).toBeUndefined();
      expect(await history.getMessageByNumericId(m.applicationId, m.numericId + 1_000_000)).toBeUndefined();
    });

    it('finds a message by its numeric id whatever its application, for operators', async () => {
      const m = message({ applicationId: 'app-two', content: 'Kia ora — 你好 👋🏽' });
      await history.insertMessages([m, message()], [accepted(m)]);
      expect(await history.findMessageByNumericId(m.numericId)).toMatchObject({
        id: m.id,
        applicationId: 'app-two',
        numericId: m.numericId,
        status: 'accepted',
      });
      expect(await history.findMessageByNumericId(m.numericId + 1_000_000)).toBeUndefined();
    });

    it('finds many messages by id in one call, whatever their application, leaving out unknown ids', async () => {
      const mine = message({ content: 'Kia ora — tēnā koe 👋🏽', reference: "o'brien" });
      const theirs = message({ applicationId: 'app-two', direction: 'MO', replyTo: mine.id, replyRoute: 'keyword STOP' });
      const many = Array.from({ length: 1500 }, () => message());
      await history.insertMessages([mine, theirs, ...many], [accepted(mine)]);

      const found = await history.findMessages([mine.id, theirs.id, randomUUID(), "' OR 1=1 --"]);
      expect(found.sort((a, b) => a.applicationId.localeCompare(b.applicationId))).toEqual(
        [mine, theirs].sort((a, b) => a.applicationId.localeCompare(b.applicationId)),
      );
      // More ids than one query takes.
      expect((await history.findMessages(many.map((m) => m.id))).map((m) => m.id).sort()).toEqual(many.map((m) => m.id).sort());
      expect(await history.findMessages([])).toEqual([]);
    });

    it('reports the furthest stage as the latest status even when events arrive out of order', async () => {
      const m = message();
      await history.insertMessages([m], [accepted(m)]);
      await history.appendEvents([event(m, 'received', BASE + 30, { carrierId: 'c-1' })]);
      await history.appendEvents([event(m, 'sent', BASE + 10)]);
      // A late report with a later time but an earlier stage does not win either.
      await history.appendEvents([event(m, 'queued', BASE + 100), event(m, 'submitted', BASE + 90)]);

      expect(await history.getMessage(m.applicationId, m.id)).toMatchObject({ status: 'received', statusAt: BASE + 30 });
    });

    it('keeps times to the millisecond, including times beyond 2038', async () => {
      const m = message({ acceptedAt: Date.UTC(2041, 4, 6, 7, 8, 9, 987), scheduledAt: Date.UTC(2041, 4, 7, 0, 0, 0, 1) });
      await history.insertMessages([m], [accepted(m)]);
      expect(await history.getMessage(m.applicationId, m.id)).toMatchObject({ acceptedAt: m.acceptedAt, scheduledAt: m.scheduledAt, statusAt: m.acceptedAt });
    });

    it('lists unfinished messages oldest first, page by page, leaving out submitted and final ones', async () => {
      const at = (n: number) => BASE + n * 1000;
      const ms = {
        accepted: message({ acceptedAt: at(1) }),
        queuedA: message({ id: '00000000-aaaa-0000-0000-000000000000', acceptedAt: at(2) }),
        // Same acceptance time: the id decides the order.
        queuedB: message({ id: '00000000-bbbb-0000-0000-000000000000', acceptedAt: at(2) }),
        submitted: message({ acceptedAt: at(3) }),
        received: message({ acceptedAt: at(4) }),
        sent: message({ acceptedAt: at(5), applicationId: 'app-two' }),
        failed: message({ acceptedAt: at(6) }),
        scheduled: message({ acceptedAt: at(7), scheduledAt: at(100_000) }),
      };
      const all = Object.values(ms);
      // Inserted in an order unrelated to acceptance order.
      await history.insertMessages([...all].reverse(), all.map(accepted));
      await history.appendEvents([
        event(ms.queuedA, 'queued', at(2) + 1),
        event(ms.queuedB, 'queued', at(2) + 1),
        event(ms.submitted, 'sent', at(3) + 1),
        event(ms.submitted, 'submitted', at(3) + 2),
        event(ms.received, 'received', at(4) + 5),
        event(ms.sent, 'queued', at(5) + 1),
        event(ms.sent, 'sent', at(5) + 2),
        event(ms.failed, 'failed', at(6) + 1),
      ]);

      const pages: string[][] = [];
      const statuses = new Map<string, string>();
      let after: { acceptedAt: number; id: string } | undefined;
      for (let guard = 0; guard < 10; guard++) {
        const page = await history.listUnfinished(2, after);
        if (page.length === 0) break;
        expect(page.length).toBeLessThanOrEqual(2);
        pages.push(page.map((m) => m.id));
        for (const m of page) statuses.set(m.id, m.status);
        const last = page[page.length - 1]!;
        after = { acceptedAt: last.acceptedAt, id: last.id };
      }

      expect(pages.flat()).toEqual([ms.accepted.id, ms.queuedA.id, ms.queuedB.id, ms.sent.id, ms.scheduled.id]);
      expect(pages[0]).toEqual([ms.accepted.id, ms.queuedA.id]);
      expect(Object.fromEntries(statuses)).toEqual({
        [ms.accepted.id]: 'accepted',
        [ms.queuedA.id]: 'queued',
        [ms.queuedB.id]: 'queued',
        [ms.sent.id]: 'sent',
        [ms.scheduled.id]: 'accepted',
      });
    });

    it('lists the SMS messages waiting for their receipts with every carrier id their submits got, page by page', async () => {
      const at = (n: number) => BASE + n * 1000;
      const ms = {
        queued: message({ acceptedAt: at(1) }),
        long: message({ acceptedAt: at(2), content: 'Tēnā koutou katoa — '.repeat(12) }),
        // Sent twice (a worker that died before it said so): both submits' carrier ids.
        twice: message({ acceptedAt: at(3) }),
        received: message({ acceptedAt: at(4) }),
        email: message({ acceptedAt: at(5), channel: 'email', destination: 'mere@example.nz' }),
        single: message({ acceptedAt: at(6), applicationId: 'app-two', content: '你好 👋🏽' }),
      };
      const all = Object.values(ms);
      await history.insertMessages([...all].reverse(), all.map(accepted));
      const submitted = (m: MessageRecord, n: number, carrierId: string) => event(m, 'submitted', at(n) + 2, { carrierId });
      const longSubmitted = submitted(ms.long, 2, 'smsc:0a01');
      await history.appendEvents([
        event(ms.queued, 'queued', at(1) + 1),
        longSubmitted,
        ...partRows(longSubmitted, ['smsc:0a02', 'smsc:0a03']),
        submitted(ms.twice, 3, 'smsc:0b01'),
        event(ms.twice, 'submitted', at(3) + 9, { carrierId: 'smsc:0b02' }),
        submitted(ms.received, 4, 'smsc:0c01'),
        event(ms.received, 'received', at(4) + 5, { carrierId: 'smsc:0c01' }),
        submitted(ms.email, 5, '<m1@mx.example.nz>'),
        submitted(ms.single, 6, 'other:ff'),
      ]);

      const pages: { id: string; status: string; carrierIds: string[] }[][] = [];
      let after: { acceptedAt: number; id: string } | undefined;
      for (let guard = 0; guard < 10; guard++) {
        const page = await history.listAwaitingReceipt(2, after);
        if (page.length === 0) break;
        pages.push(page.map((m) => ({ id: m.id, status: m.status, carrierIds: m.carrierIds })));
        after = { acceptedAt: page.at(-1)!.acceptedAt, id: page.at(-1)!.id };
      }
      expect(pages).toEqual([
        [
          { id: ms.long.id, status: 'submitted', carrierIds: ['smsc:0a01', 'smsc:0a02', 'smsc:0a03'] },
          { id: ms.twice.id, status: 'submitted', carrierIds: ['smsc:0b01', 'smsc:0b02'] },
        ],
        [{ id: ms.single.id, status: 'submitted', carrierIds: ['other:ff'] }],
      ]);
      const [first] = await history.listAwaitingReceipt(1, undefined);
      expect(first).toMatchObject({ ...ms.long, status: 'submitted', statusAt: at(2) + 2 });
      expect((await history.listAwaitingReceipt(10, undefined, at(3))).map((m) => m.id)).toEqual([ms.long.id]);
    });

    it('lists an open Intelligent Messaging message once, though its row was written twice (a retried insert, a journal replayed)', async () => {
      const im = message({ channel: 'im', via: 'im_v1', acceptedAt: BASE + 3, content: 'Kia ora — 你好 👋🏽' });
      await history.insertMessages([im], [accepted(im)]);
      await history.insertMessages([im], [accepted(im)]);
      expect((await history.im.listOpenMessages(BASE)).map((m) => m.id)).toEqual([im.id]);
    });

    it('returns whole unfinished messages, ready to be dispatched again', async () => {
      const m = message({ acceptedAt: BASE + 7 });
      await history.insertMessages([m], [accepted(m)]);
      await history.appendEvents([event(m, 'queued', BASE + 8)]);
      expect(await history.listUnfinished(10)).toEqual([{ ...m, status: 'queued', statusAt: BASE + 8 }]);
    });

    it('leaves out the messages accepted from the instant it is given: a core recovering while it takes new ones', async () => {
      const earlier = message({ acceptedAt: BASE + 7, content: 'Kia ora — i mua 👋🏽' });
      const later = message({ acceptedAt: BASE + 9, content: '你好 — i muri' });
      await history.insertMessages([earlier, later], [accepted(earlier), accepted(later)]);
      expect((await history.listUnfinished(10, undefined, BASE + 9)).map((m) => m.id)).toEqual([earlier.id]);
      expect((await history.listUnfinished(10)).map((m) => m.id)).toEqual([earlier.id, later.id]);
    });

    it('stores a large batch in one call and pages through all of it', async () => {
      const batch = Array.from({ length: 2500 }, (_, i) => message({ acceptedAt: BASE + i }));
      await history.insertMessages(batch, batch.map(accepted));
      let after: { acceptedAt: number; id: string } | undefined;
      const ids: string[] = [];
      for (;;) {
        const page = await history.listUnfinished(1000, after);
        if (page.length === 0) break;
        ids.push(...page.map((m) => m.id));
        after = { acceptedAt: page.at(-1)!.acceptedAt, id: page.at(-1)!.id };
      }
      expect(ids).toEqual(batch.map((m) => m.id));
    });

    it('finds messages by the carrier’s ids for them, many in one call', async () => {
      const m = message();
      const other = message();
      await history.insertMessages([m, other], [accepted(m), accepted(other)]);
      await history.appendEvents([
        event(m, 'submitted', BASE + 1, { carrierId: 'carrier-77' }),
        event(other, 'submitted', BASE + 1, { carrierId: 'carrier-78' }),
      ]);

      const found = await history.findMessageIdsByCarrierIds(['carrier-77', 'carrier-78', 'carrier-79', '', "' OR 1=1 --"]);
      expect(found).toEqual(
        new Map([
          ['carrier-77', m.id],
          ['carrier-78', other.id],
        ]),
      );
      expect(await history.findMessageIdsByCarrierIds([])).toEqual(new Map());
    });

    it('finds, for a carrier id the carrier gave again (its counter wrapped, or it restarted), the message submitted with it last', async () => {
      const [first, second, third, last] = [message(), message(), message(), message()];
      await history.insertMessages([first, second, third, last], [first, second, third, last].map(accepted));
      // Each of the first three ended `received` under the id; the last is still waiting for its receipt, which came after
      // the third's receipt: whatever the order the engine keeps the rows in, the last submit is the one the id means now.
      await history.appendEvents([
        event(first, 'submitted', BASE + 10, { carrierId: 'reused-70EA40' }),
        event(first, 'received', BASE + 11, { carrierId: 'reused-70EA40' }),
        event(second, 'submitted', BASE + 20, { carrierId: 'reused-70EA40' }),
        event(second, 'received', BASE + 21, { carrierId: 'reused-70EA40' }),
        event(third, 'submitted', BASE + 30, { carrierId: 'reused-70EA40' }),
        event(last, 'submitted', BASE + 40, { carrierId: 'reused-70EA40' }),
        event(third, 'received', BASE + 41, { carrierId: 'reused-70EA40' }),
      ]);
      expect(await history.findMessageIdsByCarrierIds(['reused-70EA40'])).toEqual(new Map([['reused-70EA40', last.id]]));
    });

    it('finds a long message by any part’s carrier id, and shows only its own events and route, not its part rows', async () => {
      const m = message();
      await history.insertMessages([m], [accepted(m)]);
      const submitted = { ...event(m, 'submitted', BASE + 2, { applicationId: '', carrierId: 'part-1', detail: 'route nz-mobile → carrier spark' }) };
      await history.appendEvents([submitted, ...partRows(submitted, ['part-2', 'part-3'])]);

      const found = await history.findMessageIdsByCarrierIds(['part-1', 'part-2', 'part-3']);
      expect(found).toEqual(new Map(['part-1', 'part-2', 'part-3'].map((c) => [c, m.id])));
      expect((await history.listEvents(m.id)).map((e) => [e.status, e.carrierId])).toEqual([
        ['accepted', ''],
        ['submitted', 'part-1'],
      ]);
      expect(await history.getMessageRoute(m.applicationId, m.id)).toEqual({ route: 'route nz-mobile → carrier spark', carrierId: 'part-1', at: BASE + 2 });
      expect((await history.latestStatuses([m.id])).get(m.id)?.status).toBe('submitted');
    });

    it('finds the messages whose ids an Idempotency-Key made, accepted since a time, newest first, at most as many as asked', async () => {
      // Far past the other cases' times: only this case's messages are that recent.
      const at = BASE + 9_000_000_000;
      const key = (n: number) => hashedUuid('app-Ō', `sms_v2:tono-${n}-${at}`, '0');
      const older = message({ id: key(1), applicationId: 'app-Ō', numericId: 71, acceptedAt: at - 1 });
      const keyed = message({ id: key(2), applicationId: 'app-Ō', numericId: 72, acceptedAt: at + 1 });
      const newer = message({ id: key(3), applicationId: 'app-Ō', numericId: 73, acceptedAt: at + 2 });
      // Random ids with the fourth group starting 8: never taken for keyed ones.
      const plain = message({ id: `${key(4).slice(0, 19)}8${key(4).slice(20)}`, acceptedAt: at + 3 });
      await history.insertMessages([older, keyed, newer, plain], [older, keyed, newer, plain].map(accepted));

      expect(await history.keyedMessagesSince(at, 10)).toEqual([
        { id: newer.id, numericId: 73, applicationId: 'app-Ō' },
        { id: keyed.id, numericId: 72, applicationId: 'app-Ō' },
      ]);
      expect(await history.keyedMessagesSince(at, 1)).toEqual([{ id: newer.id, numericId: 73, applicationId: 'app-Ō' }]);
    });

    it('tells the latest sends to a handset written any of its ways, newest first, since a time, and nothing else', async () => {
      const handset = `+642300${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
      const old = message({ destination: handset, acceptedAt: BASE - 10_000, applicationId: 'app-old' });
      const first = message({ destination: handset, acceptedAt: BASE + 1, applicationId: 'app-one', source: '4100' });
      const second = message({ destination: handset.slice(1), acceptedAt: BASE + 2, applicationId: 'app-two', source: '', mask: 'Tāmaki' });
      const reply = message({ destination: '4100', source: handset, direction: 'MO', acceptedAt: BASE + 3 });
      const elsewhere = message({ destination: '+6423999999', acceptedAt: BASE + 4 });
      await history.insertMessages([old, first, second, reply, elsewhere], [old, first, second, reply, elsewhere].map(accepted));

      const sends = await history.lastSendsTo([handset, handset.slice(1), `00${handset.slice(1)}`], BASE, BASE + 60_000);
      expect(sends).toEqual([
        { messageId: second.id, applicationId: 'app-two', source: '', mask: 'Tāmaki', acceptedAt: BASE + 2 },
        { messageId: first.id, applicationId: 'app-one', source: '4100', mask: first.mask, acceptedAt: BASE + 1 },
      ]);
      expect(await history.lastSendsTo(["' OR 1=1 --"], 0, BASE)).toEqual([]);
      expect(await history.lastSendsTo([], 0, BASE)).toEqual([]);
    });

    it('leaves out of the latest sends to a handset a message not yet due and one that was screened out, which never went to it', async () => {
      // Two applications on one short code (trial: after a restart a reply went to the one whose send was only scheduled,
      // or blocked by its opt-out, and a STOP opted the handset out of the wrong application).
      const handset = `+642301${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`;
      const now = BASE + 60_000;
      const sent = message({ destination: handset, acceptedAt: BASE + 1, applicationId: 'app-acme', source: '4700' });
      const tomorrow = message({ destination: handset, acceptedAt: BASE + 2, applicationId: 'app-kāinga', source: '4700', scheduledAt: now + 86_400_000 });
      const blocked = message({ destination: handset, acceptedAt: BASE + 3, applicationId: 'app-kāinga', source: '4700' });
      const deficient = message({ destination: handset.slice(1), acceptedAt: BASE + 4, applicationId: 'app-kāinga', source: '4700' });
      const due = message({ destination: handset, acceptedAt: BASE + 5, applicationId: 'app-tahi', source: '4700', scheduledAt: now - 1_000 });
      const all = [sent, tomorrow, blocked, deficient, due];
      await history.insertMessages(all, all.map(accepted));
      await history.appendEvents([event(blocked, 'blocked', BASE + 10), event(deficient, 'deficient', BASE + 11), event(sent, 'received', BASE + 12)]);

      const sends = await history.lastSendsTo([handset, handset.slice(1)], BASE, now);
      expect(sends.map((s) => s.messageId)).toEqual([due.id, sent.id]);
    });

    it('tells each address applications sent from since a time, by source or else mask, with the latest time each', async () => {
      const code = `47${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
      const mask = `Pānui${Math.floor(Math.random() * 1e6)}`;
      const sends = [
        message({ source: code, acceptedAt: BASE + 1, applicationId: 'app-one' }),
        message({ source: code, acceptedAt: BASE + 5, applicationId: 'app-one' }),
        message({ source: code, acceptedAt: BASE + 3, applicationId: 'app-two' }),
        message({ source: '', mask, acceptedAt: BASE + 2, applicationId: 'app-two' }),
        message({ source: code, acceptedAt: BASE - 10_000, applicationId: 'app-old' }),
        message({ source: '+6421000000', destination: code, direction: 'MO', acceptedAt: BASE + 4, applicationId: 'app-one' }),
      ];
      await history.insertMessages(sends, sends.map(accepted));
      const ours = (await history.sendersSince(BASE)).filter((s) => s.source === code || s.mask === mask);
      const byKey = (s: { source: string; mask: string; applicationId: string }) => `${s.source}|${s.mask}|${s.applicationId}`;
      expect(ours.sort((a, b) => byKey(a).localeCompare(byKey(b)))).toEqual([
        { source: '', mask, applicationId: 'app-two', at: BASE + 2 },
        { source: code, mask: sends[0]!.mask, applicationId: 'app-one', at: BASE + 5 },
        { source: code, mask: sends[2]!.mask, applicationId: 'app-two', at: BASE + 3 },
      ]);
    });

    it('counts the messages of an application since a time that took from its quota, and no others', async () => {
      const app = `quota-${randomUUID()}`;
      const since = BASE + 1000;
      const counted = [
        message({ applicationId: app, acceptedAt: since }),
        message({ applicationId: app, acceptedAt: since + 5, via: 'gateway_v1', content: 'Mōrena — 早上好 ☀️' }),
        message({ applicationId: app, acceptedAt: since + 6, via: 'im_v1' }),
        message({ applicationId: app, acceptedAt: since + 7, via: 'campaign' }),
      ];
      const notCounted = [
        message({ applicationId: app, acceptedAt: since - 1 }),
        message({ applicationId: 'another-app', acceptedAt: since + 1 }),
        message({ applicationId: app, acceptedAt: since + 2, direction: 'MO' }),
        message({ applicationId: app, acceptedAt: since + 3, via: 'im_attempt' }),
        message({ applicationId: app, acceptedAt: since + 4, via: 'campaign_opt_out_response' }),
      ];
      const blocked = message({ applicationId: app, acceptedAt: since + 8 });
      const deficient = message({ applicationId: app, acceptedAt: since + 9 });
      const all = [...counted, ...notCounted, blocked, deficient];
      await history.insertMessages(all, all.map(accepted));
      await history.appendEvents([
        event(blocked, 'blocked', since + 8, { detail: 'destination opted out' }),
        event(deficient, 'deficient', since + 9, { detail: "over the application's quota of 5 messages a day" }),
        event(counted[0]!, 'received', since + 20),
      ]);
      expect(await history.countQuotaUse(app, since)).toBe(counted.length);
      expect(await history.countQuotaUse(app, since + 6)).toBe(2);
      expect(await history.countQuotaUse('nobody', since)).toBe(0);
    });

    it('tells the latest status of many messages in one call, by stage before time', async () => {
      const received = message();
      const submitted = message();
      const silent = message();
      await history.insertMessages([received, submitted, silent], [accepted(received), accepted(submitted)]);
      await history.appendEvents([
        event(received, 'submitted', BASE + 5, { carrierId: 'carrier-Ā-90' }),
        event(received, 'received', BASE + 3),
        event(submitted, 'submitted', BASE + 4, { carrierId: 'carrier-91' }),
      ]);

      const latest = await history.latestStatuses([received.id, submitted.id, silent.id, 'nobody', received.id]);
      expect(latest).toEqual(
        new Map([
          [received.id, { status: 'received', at: BASE + 3 }],
          [submitted.id, { status: 'submitted', at: BASE + 4 }],
        ]),
      );
      expect(await history.latestStatuses([])).toEqual(new Map());
    });

    it('lists every status event of a message, oldest first, for its journey', async () => {
      const m = message();
      await history.insertMessages([m], [accepted(m)]);
      await history.appendEvents([
        event(m, 'received', BASE + 30, { carrierId: 'carrier-журнал-1' }),
        event(m, 'submitted', BASE + 10, { carrierId: 'carrier-журнал-1', detail: 'Kia ora, e hoa mā — tēnā koe 👋🏽' }),
      ]);
      const events = await history.listEvents(m.id);
      expect(events.map((e) => [e.status, e.at, e.carrierId])).toEqual([
        ['accepted', m.acceptedAt, ''],
        ['submitted', BASE + 10, 'carrier-журнал-1'],
        ['received', BASE + 30, 'carrier-журнал-1'],
      ]);
      expect(events[1]).toMatchObject({ applicationId: m.applicationId, detail: 'Kia ora, e hoa mā — tēnā koe 👋🏽' });
      expect(await history.listEvents(randomUUID())).toEqual([]);
    });

    it('gives the route and carrier of a message from its latest submitted event, only to its own application', async () => {
      const m = message();
      const waiting = message();
      await history.insertMessages([m, waiting], [accepted(m), accepted(waiting)]);
      // As core records a worker's report: without the application.
      await history.appendEvents([
        event(m, 'submitted', BASE + 1, { applicationId: '', carrierId: 'a-1', detail: 'route nz-mobile → carrier spark' }),
        event(m, 'submitted', BASE + 2, { applicationId: '', carrierId: 'b-1', detail: 'route nz-mobile → carrier one-nz (failover from spark)' }),
        event(m, 'received', BASE + 3, { carrierId: 'b-1' }),
      ]);

      expect(await history.getMessageRoute(m.applicationId, m.id)).toEqual({
        route: 'route nz-mobile → carrier one-nz (failover from spark)',
        carrierId: 'b-1',
        at: BASE + 2,
      });
      expect(await history.getMessageRoute('another-application', m.id)).toBeUndefined();
      expect(await history.getMessageRoute(waiting.applicationId, waiting.id)).toBeUndefined();
    });

    it('gives the route and the carrier ids of the parts a carrier took of a long message it then refused, which stays rejected', async () => {
      const m = message({ segments: 4 });
      await history.insertMessages([m], [accepted(m)]);
      const rejected = event(m, 'rejected', BASE + 5, {
        applicationId: '',
        detail: 'part 2 of 4 refused: ESME_RINVDSTADR (the carrier took 2 of its 4 parts: spark:ā1, spark:ā3)',
        errorCode: 'rejected',
      });
      await history.appendEvents([rejected, ...takenPartRows(rejected, ['spark:ā1', 'spark:ā3'], 'route nz-mobile → carrier spark')]);

      expect(await history.getMessageRoute(m.applicationId, m.id)).toEqual({
        route: 'route nz-mobile → carrier spark',
        carrierId: '',
        at: BASE + 5,
        takenPartCarrierIds: ['spark:ā1', 'spark:ā3'],
      });
      expect(await history.getMessageRoute('another-application', m.id)).toBeUndefined();
      expect((await history.latestStatuses([m.id])).get(m.id)?.status).toBe('rejected');
      expect((await history.listEvents(m.id)).map((e) => e.status)).toEqual(['accepted', 'rejected']);
      expect(await history.findMessageIdsByCarrierIds(['spark:ā3'])).toEqual(new Map([['spark:ā3', m.id]]));
    });

    it('replaces an application by name on upsert and finds it by the hash of its current API key', async () => {
      const v1: ApplicationRecord = {
        id: randomUUID(),
        name: 'acme',
        passwordHash: 'scrypt$1$1$1$salt$one',
        apiKeyHash: 'a'.repeat(64),
        statusCallbackUrl: 'https://cb.example/status',
        replyCallbackUrl: '',
        callbackSecret: 'k1',
        previousCallbackSecret: '',
        previousCallbackSecretUntil: 0,
        imStatusCallbackUrl: '',
        imDefaultAttempts: '',
        sourceAddresses: [],
        imRateLimit: -1,
        quotaMessages: 0,
        quotaPeriod: '',
        updatedAt: BASE,
      };
      // A rotation with an overlap: the secret replaced signs beside the new one until then.
      const v2: ApplicationRecord = {
        ...v1,
        passwordHash: 'scrypt$1$1$1$salt$two',
        apiKeyHash: 'b'.repeat(64),
        callbackSecret: 'k2',
        previousCallbackSecret: 'k1',
        previousCallbackSecretUntil: BASE + 86_400_000 + 7,
        updatedAt: BASE + 1,
      };
      const other: ApplicationRecord = {
        id: randomUUID(),
        name: 'globex',
        passwordHash: '',
        apiKeyHash: '',
        statusCallbackUrl: '',
        replyCallbackUrl: '',
        callbackSecret: '',
        previousCallbackSecret: '',
        previousCallbackSecretUntil: 0,
        imStatusCallbackUrl: '',
        imDefaultAttempts: '',
        sourceAddresses: [],
        imRateLimit: -1,
        quotaMessages: 0,
        quotaPeriod: '',
        updatedAt: BASE,
      };
      await history.upsertApplication(v1);
      await history.upsertApplication(other);
      await history.upsertApplication(v2);

      expect(await history.getApplicationByName('acme')).toEqual(v2);
      expect(await history.getApplicationByName('globex')).toEqual(other);
      expect(await history.getApplicationByName('initech')).toBeUndefined();
      expect(await history.getApplicationByApiKeyHash(v2.apiKeyHash)).toEqual(v2);
      expect(await history.getApplicationByApiKeyHash(v1.apiKeyHash)).toBeUndefined();
      expect(await history.getApplicationByApiKeyHash('')).toBeUndefined();
      expect(await history.listApplications()).toEqual([v2, other]);
    });

    it('stores short links and counts their clicks', async () => {
      const link = { code: 'Ab3dE6gH', url: 'https://example.com/a?b=c', messageId: randomUUID(), applicationId: 'a1', createdAt: BASE };
      await history.insertShortLinks([link]);
      expect(await history.getShortLink('Ab3dE6gH')).toEqual(link);
      expect(await history.getShortLink('ab3de6gh')).toBeUndefined();
      await history.recordLinkClicks([
        { code: link.code, at: BASE + 1, userAgent: 'ua', ip: '127.0.0.1' },
        { code: link.code, at: BASE + 2, userAgent: 'ua', ip: '127.0.0.1' },
      ]);
      expect(await history.countLinkClicks(link.code)).toBe(2);
    });

    it('keeps the latest opt-out per application and handset', async () => {
      await history.recordOptOuts([
        { applicationId: 'a1', handset: '+641', optedOut: true, at: BASE },
        { applicationId: 'a1', handset: '+642', optedOut: true, at: BASE },
        { applicationId: 'a2', handset: '+641', optedOut: true, at: BASE },
      ]);
      await history.recordOptOuts([{ applicationId: 'a1', handset: '+642', optedOut: false, at: BASE + 1 }]);
      expect((await history.listOptOuts('a1')).map((o) => o.handset)).toEqual(['+641']);
      expect((await history.listOptOuts()).map((o) => `${o.applicationId} ${o.handset}`)).toEqual(['a1 +641', 'a2 +641']);
    });

    it('keeps the latest block-list entry per scope and prefix, globally and per application', async () => {
      await history.recordBlocks([
        { scope: '', prefix: '+6421', blocked: true, at: BASE },
        { scope: 'a1', prefix: '+819012345678', blocked: true, at: BASE },
        { scope: 'a1', prefix: '+86', blocked: true, at: BASE },
      ]);
      await history.recordBlocks([{ scope: 'a1', prefix: '+86', blocked: false, at: BASE + 1 }]);
      expect((await history.listBlocks('a1')).map((b) => b.prefix)).toEqual(['+819012345678']);
      expect((await history.listBlocks('')).map((b) => b.prefix)).toEqual(['+6421']);
      expect((await history.listBlocks()).map((b) => `${b.scope}|${b.prefix}`)).toEqual(['|+6421', 'a1|+819012345678']);
    });

    it('keeps the rule that routed a reply on the reply, and none on other messages', async () => {
      const mt = message();
      const mo = message({ direction: 'MO', content: 'Kia ora, e hoa mā', replyTo: mt.id, replyRoute: 'last-message-from-address' });
      await history.insertMessages([mt, mo], [accepted(mt), accepted(mo)]);
      expect(await history.getMessage(mo.applicationId, mo.id)).toMatchObject({
        replyRoute: 'last-message-from-address',
        replyTo: mt.id,
        content: 'Kia ora, e hoa mā',
      });
      expect((await history.getMessage(mt.applicationId, mt.id))?.replyRoute).toBeUndefined();
    });

    it('keeps messages, events and applications across closing and reopening', async () => {
      const m = message();
      const app: ApplicationRecord = {
        id: randomUUID(),
        name: 'durable',
        passwordHash: '',
        apiKeyHash: 'c'.repeat(64),
        statusCallbackUrl: '',
        replyCallbackUrl: 'https://cb.example/reply',
        callbackSecret: 's',
        previousCallbackSecret: '',
        previousCallbackSecretUntil: 0,
        imStatusCallbackUrl: 'https://cb.example/im',
        imDefaultAttempts: 'wab:read:60,sms',
        sourceAddresses: ['4001', 'Māori Co'],
        imRateLimit: 5,
        quotaMessages: 10_000,
        quotaPeriod: 'day',
        updatedAt: BASE,
      };
      await history.insertMessages([m], [accepted(m)]);
      await history.appendEvents([event(m, 'submitted', BASE + 1, { carrierId: 'carrier-1' })]);
      await history.upsertApplication(app);
      await history.close();

      history = await harness.open();
      expect(await history.getMessage(m.applicationId, m.id)).toEqual({ ...m, status: 'submitted', statusAt: BASE + 1 });
      expect((await history.findMessageIdsByCarrierIds(['carrier-1'])).get('carrier-1')).toBe(m.id);
      expect(await history.getApplicationByName('durable')).toEqual(app);
    });

    it('keeps every row when two writers on the same store insert at the same time', async () => {
      const second = await harness.open();
      try {
        const texts = ['Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉'];
        // Two tenants share a handset; each writer sends batches of both.
        const batchOf = (writer: number, n: number) =>
          Array.from({ length: 50 }, (_, i) =>
            message({
              applicationId: i % 2 ? 'app-one' : 'app-two',
              destination: '+64211234567',
              content: `${texts[(writer + n + i) % 4]} ${writer}/${n}/${i}`,
              acceptedAt: BASE + n * 100 + i,
            }),
          );
        const batches = [0, 1].map((writer) => Array.from({ length: 6 }, (_, n) => batchOf(writer, n)));
        const write = (h: History, own: MessageRecord[][]) =>
          Promise.all(
            own.map(async (batch) => {
              await h.insertMessages(batch, batch.map(accepted));
              await h.appendEvents(batch.map((m) => event(m, 'queued', m.acceptedAt + 1)));
            }),
          );
        await Promise.all([write(history, batches[0]!), write(second, batches[1]!)]);
        // And both report on one message at once: the furthest stage wins whichever lands last.
        const shared = batches[0]![0]![0]!;
        await Promise.all([
          history.appendEvents([event(shared, 'received', BASE + 50_000, { carrierId: 'c-shared' })]),
          second.appendEvents([event(shared, 'submitted', BASE + 60_000)]),
        ]);

        const expected = batches
          .flat(2)
          .filter((m) => m.id !== shared.id)
          .map((m) => ({ ...m, status: 'queued', statusAt: m.acceptedAt + 1 }));
        const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
        for (const reader of [history, second]) {
          // 'received' is final for recovery, so the shared message is read on its own.
          expect((await reader.listUnfinished(1000)).sort(byId)).toEqual(expected.sort(byId));
          expect(await reader.getMessage(shared.applicationId, shared.id)).toEqual({ ...shared, status: 'received', statusAt: BASE + 50_000 });
        }
        expect((await second.findMessageIdsByCarrierIds(['c-shared'])).get('c-shared')).toBe(shared.id);
      } finally {
        await second.close();
      }
    });

    it('tells how much memory the engine tracks as in use', async () => {
      const m = message();
      await history.insertMessages([m], [accepted(m)]);
      await history.getMessage(m.applicationId, m.id);
      const bytes = await history.engineMemoryBytes();
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThan(64 * 1024 ** 3);
    });

    it('answers a ping, and accepts empty batches', async () => {
      await history.ping();
      await history.insertMessages([], []);
      await history.appendEvents([]);
      expect(await history.listUnfinished(10)).toEqual([]);
    });
    describe('campaign store', () => {
      const list = (overrides: Partial<ListRecord> = {}): ListRecord => ({
        id: 101,
        applicationId: 'app-one',
        name: 'kiritaki VIP — 贵宾 🌟',
        batch: 'Poutū-te-rangi',
        email: 'ops@example.com',
        removeOptOuts: true,
        memberCount: 3,
        createdAt: BASE,
        deleted: false,
        updatedAt: BASE,
        ...overrides,
      });
      const campaign = (overrides: Partial<CampaignRecord> = {}): CampaignRecord => ({
        id: 202,
        applicationId: 'app-one',
        name: 'Hoko o te kōanga 🌸',
        batch: '',
        email: '',
        scheduleAt: BASE + 60_000,
        utcOffsetMinutes: 780,
        content: 'Kia ora {{param1}} — 你好 👋🏽',
        template: '',
        mask: 'Café',
        optOutResponse: 'Ka kite — до свидания 👋🏽',
        replyResponse: 'Ngā mihi — 谢谢 🙏🏽',
        removeOptOuts: true,
        memberCount: 2,
        removedOptOuts: 1,
        numericBase: 4096 * 1000,
        state: 'scheduled',
        createdAt: BASE,
        updatedAt: BASE,
        ...overrides,
      });

      it('reads members back in pages by position, with their parameters and opt-out mark', async () => {
        const rows = Array.from({ length: 2500 }, (_, i) => ({
          position: i,
          destination: `+64210${String(i).padStart(5, '0')}`,
          params: [`Ānaru-${i} 👋🏽`, '', '', '', '', i % 2 ? 'шесть 六' : ''],
          optedOut: i === 7,
        }));
        await history.campaigns.insertMembers(101, rows.slice(0, 1200));
        await history.campaigns.insertMembers(101, rows.slice(1200));
        await history.campaigns.insertMembers(102, rows.slice(0, 5));
        const page = await history.campaigns.readMembers(101, 1000, 1000);
        expect(page).toHaveLength(1000);
        expect(page[0]).toEqual(rows[1000]);
        expect(page[999]).toEqual(rows[1999]);
        expect((await history.campaigns.readMembers(101, 2400, 1000)).map((m) => m.position)).toEqual(rows.slice(2400).map((m) => m.position));
        expect((await history.campaigns.readMembers(101, 0, 10))[7]!.optedOut).toBe(true);
        // An import that never committed leaves no members behind.
        await history.campaigns.deleteMembers(101);
        expect(await history.campaigns.readMembers(101, 0, 10)).toEqual([]);
        expect(await history.campaigns.readMembers(102, 0, 10)).toHaveLength(5);
      });

      it('shows only lists not deleted, of the application asked for', async () => {
        await history.campaigns.upsertList(list());
        await history.campaigns.upsertList(list({ id: 102, name: 'другой — 其他' }));
        await history.campaigns.upsertList(list({ id: 103, applicationId: 'app-two' }));
        await history.campaigns.upsertList(list({ id: 102, name: 'другой — 其他', deleted: true, updatedAt: BASE + 1 }));
        expect(await history.campaigns.listLists('app-one')).toEqual([list()]);
        expect((await history.campaigns.listLists('app-two')).map((l) => l.id)).toEqual([103]);
      });

      it("finds a keyed import's answer once its list or campaign row is written, deleted or not, scoped to its application", async () => {
        const keyed = (overrides: Partial<KeyedImport> = {}): KeyedImport => ({
          applicationId: 'app-one',
          dedupKey: 'kī-0.ℹ️',
          kind: 'list',
          id: 101,
          errorMessages: '1 duplicate member was removed — 重复',
          members: 2,
          optedOut: 1,
          at: BASE,
          ...overrides,
        });
        await history.campaigns.rememberKeyedImport(keyed());
        // Remembered before its row: a crash in between leaves nothing to answer with.
        expect(await history.campaigns.findKeyedImport('app-one', 'kī-0.ℹ️')).toBeUndefined();
        await history.campaigns.upsertList(list());
        expect(await history.campaigns.findKeyedImport('app-one', 'kī-0.ℹ️')).toEqual(keyed());
        await history.campaigns.upsertList(list({ deleted: true, updatedAt: BASE + 1 }));
        expect(await history.campaigns.findKeyedImport('app-one', 'kī-0.ℹ️')).toEqual(keyed());
        expect(await history.campaigns.findKeyedImport('app-two', 'kī-0.ℹ️')).toBeUndefined();
        expect(await history.campaigns.findKeyedImport('app-one', 'kī-1')).toBeUndefined();
        // A retry after a crash that kept the first row from being written remembers its own.
        await history.campaigns.rememberKeyedImport(keyed({ dedupKey: 'kī-2', id: 301, at: BASE }));
        await history.campaigns.rememberKeyedImport(keyed({ dedupKey: 'kī-2', kind: 'campaign', id: 202, at: BASE + 5 }));
        await history.campaigns.upsertCampaign(campaign());
        expect(await history.campaigns.findKeyedImport('app-one', 'kī-2')).toEqual(keyed({ dedupKey: 'kī-2', kind: 'campaign', id: 202, at: BASE + 5 }));
      });

      it('keeps the newest version of a campaign, scoped to its application', async () => {
        await history.campaigns.upsertCampaign(campaign());
        await history.campaigns.upsertCampaign(campaign({ state: 'sending', updatedAt: BASE + 1 }));
        await history.campaigns.upsertCampaign(campaign({ id: 203, state: 'sent', memberCount: 1000 }));
        expect(await history.campaigns.getCampaign('app-one', 202)).toEqual(campaign({ state: 'sending', updatedAt: BASE + 1 }));
        expect(await history.campaigns.getCampaign('app-two', 202)).toBeUndefined();
        expect((await history.campaigns.findCampaign(202))?.applicationId).toBe('app-one');
        expect((await history.campaigns.listUnsentCampaigns()).map((c) => c.id)).toEqual([202]);
        expect(await history.campaigns.maxReservedNumericId()).toBe(4096 * 1000 + 4 * 4096);
      });

      it('reads a campaign written before opted-out removals were kept as one that removed none', async () => {
        await history.campaigns.upsertCampaign(campaign());
        await history.close();
        // As a version without the column left it.
        await harness.exec(['ALTER TABLE campaigns DROP COLUMN removed_opt_outs']);
        history = await harness.open();
        expect(await history.campaigns.getCampaign('app-one', 202)).toEqual(campaign({ removedOptOuts: 0 }));
      });

      it("lists an application's campaigns, newest first, and counts a campaign's messages by latest status", async () => {
        await history.campaigns.upsertCampaign(campaign());
        await history.campaigns.upsertCampaign(campaign({ id: 203, createdAt: BASE + 5, state: 'paused' }));
        await history.campaigns.upsertCampaign(campaign({ id: 204, applicationId: 'app-two' }));
        expect((await history.campaigns.listCampaigns('app-one')).map((c) => [c.id, c.state])).toEqual([
          [203, 'paused'],
          [202, 'scheduled'],
        ]);
        expect((await history.campaigns.listCampaigns('')).map((c) => c.id).sort()).toEqual([202, 203, 204]);

        const ms = [0, 1, 2, 3, 4].map((p) => message({ id: campaignMessageId(203, p), destination: `+6421100${p}`, acceptedAt: BASE }));
        await history.insertMessages(ms, ms.map(accepted));
        await history.appendEvents([
          event(ms[0]!, 'sent', BASE + 10),
          event(ms[0]!, 'submitted', BASE + 20),
          event(ms[0]!, 'received', BASE + 30),
          event(ms[1]!, 'sent', BASE + 1000),
          event(ms[1]!, 'rejected', BASE + 1001),
          event(ms[2]!, 'queued', BASE + 5),
          event(ms[3]!, 'dead', BASE + 6),
          event(ms[4]!, 'deficient', BASE + 7),
        ]);
        const { lo, hi } = campaignMessageRange(203, 0, 10);
        expect(await history.campaigns.progressRange(lo, hi, BASE + 500)).toEqual({
          messages: 5,
          handed: 2,
          delivered: 1,
          failed: 1,
          blocked: 0,
          deficient: 1,
          dead: 1,
          waiting: 1,
          handedSince: 1,
        });
        const none = campaignMessageRange(999, 0, 10);
        expect((await history.campaigns.progressRange(none.lo, none.hi, 0)).messages).toBe(0);
      });

      it("lists an application's templates with their newest content", async () => {
        await history.campaigns.upsertTemplate({ id: 1, applicationId: 'app-one', name: 'nau mai — 欢迎', content: 'Kia ora', updatedAt: BASE });
        await history.campaigns.upsertTemplate({
          id: 1,
          applicationId: 'app-one',
          name: 'nau mai — 欢迎',
          content: 'Привет, {{param1}} 你好 👋🏽',
          updatedAt: BASE + 1,
        });
        await history.campaigns.upsertTemplate({ id: 2, applicationId: 'app-two', name: '秘密', content: 'Муна 🤫', updatedAt: BASE });
        expect(await history.campaigns.listTemplates('app-one')).toEqual([
          { id: 1, applicationId: 'app-one', name: 'nau mai — 欢迎', content: 'Привет, {{param1}} 你好 👋🏽', updatedAt: BASE + 1 },
        ]);
      });

      it('reports campaign messages in position order with their latest status and when they went out', async () => {
        const ids = [0, 1, 2].map((p) => campaignMessageId(202, p));
        const ms = ids.map((id, p) => message({ id, numericId: 4096 * 1000 + p, destination: `+6421000${p}`, acceptedAt: BASE }));
        await history.insertMessages([ms[2]!, ms[0]!, ms[1]!], ms.map(accepted));
        await history.appendEvents([
          event(ms[0]!, 'sent', BASE + 10),
          event(ms[0]!, 'received', BASE + 30),
          event(ms[0]!, 'submitted', BASE + 20),
          event(ms[1]!, 'queued', BASE + 5),
        ]);
        await history.insertMessages([message()], []);
        const range = campaignMessageRange(202, 0, 3);
        expect(await history.campaigns.messageIdsInRange(range.lo, range.hi)).toEqual(new Set(ids));
        const report = await history.campaigns.reportRange(range.lo, range.hi);
        expect(report).toEqual([
          { position: 0, messageNumericId: 4096 * 1000, mobile: '+64210000', sentAt: BASE + 10, status: 'received', statusAt: BASE + 30 },
          { position: 1, messageNumericId: 4096 * 1000 + 1, mobile: '+64210001', sentAt: 0, status: 'queued', statusAt: BASE + 5 },
          { position: 2, messageNumericId: 4096 * 1000 + 2, mobile: '+64210002', sentAt: 0, status: 'accepted', statusAt: BASE },
        ]);
        const second = campaignMessageRange(202, 1, 2);
        expect((await history.campaigns.reportRange(second.lo, second.hi)).map((r) => r.position)).toEqual([1]);
      });

      it('reports each campaign message once, however often it was stored, and not before its message row is', async () => {
        const [m0, m1, m2] = [0, 1, 2].map((p) => message({ id: campaignMessageId(303, p), numericId: 7 * 4096 + p, destination: `+6421555${p}` }));
        const other = message({ destination: '+64210000' });
        // A resumed fan-out stores member 0 a second time; member 2's events are stored, its message row not yet.
        await history.insertMessages([m0!, m1!, other], [accepted(m0!), accepted(m1!), accepted(other)]);
        await history.insertMessages([m0!], [accepted(m0!)]);
        await history.appendEvents([
          event(m2!, 'accepted', BASE),
          event(m0!, 'submitted', BASE + 20),
          event(m0!, 'sent', BASE + 10),
          event(other, 'sent', BASE + 3),
        ]);
        // `read` comes after `received`, whichever is stored first.
        await history.appendEvents([event(m1!, 'read', BASE + 50), event(m1!, 'received', BASE + 40)]);
        const { lo, hi } = campaignMessageRange(303, 0, 3);
        const batches: number[] = [];
        const rows = [];
        for await (const batch of history.campaigns.reportRows(lo, hi)) {
          batches.push(batch.length);
          rows.push(...batch);
        }
        expect(rows).toEqual([
          { position: 0, messageNumericId: 7 * 4096, mobile: '+64215550', sentAt: BASE + 10, status: 'submitted', statusAt: BASE + 20 },
          { position: 1, messageNumericId: 7 * 4096 + 1, mobile: '+64215551', sentAt: 0, status: 'read', statusAt: BASE + 50 },
        ]);
        await history.insertMessages([m2!], []);
        expect((await history.campaigns.reportRange(lo, hi)).map((r) => [r.position, r.status])).toEqual([
          [0, 'submitted'],
          [1, 'read'],
          [2, 'accepted'],
        ]);
      });

      it('writes each report row as the interface answers it, byte for byte the text the service wrote before, whatever the mobile holds', async () => {
        const controls = Array.from({ length: 0x20 }, (_, c) => String.fromCharCode(c)).join('');
        const mobiles = [
          '+64211234567',
          '0211234567',
          'Kia ora, e hoa mā — tēnā koe',
          '测试 你好世界 👋🏽🎉',
          '"quoted" \\ back\\slash / forward',
          `ctl ${controls} del \x7f nel \u0085 ls \u2028 ps \u2029 bom \ufeff`,
          '\\u2028 \\n written out',
          '',
          'ā',
        ];
        const ms = mobiles.map((destination, p) =>
          message({ id: campaignMessageId(606, p), numericId: 4096 * 2000 + p, destination, acceptedAt: BASE + p * 107 }),
        );
        await history.insertMessages(ms, ms.map(accepted));
        await history.appendEvents([
          event(ms[0]!, 'sent', BASE + 10),
          event(ms[0]!, 'submitted', BASE + 20),
          event(ms[0]!, 'received', BASE + 1_000),
          event(ms[1]!, 'queued', BASE + 7),
          event(ms[2]!, 'sent', BASE + 70),
          event(ms[2]!, 'failed', BASE + 700),
          event(ms[3]!, 'submitted', BASE + 999),
          event(ms[3]!, 'received', BASE + 86_400_000),
          event(ms[3]!, 'read', BASE + 86_400_001),
          event(ms[5]!, 'sent', BASE + 3_600_000),
          event(ms[5]!, 'dead', BASE + 3_600_500),
        ]);
        const { lo, hi } = campaignMessageRange(606, 0, mobiles.length);
        const rows = await history.campaigns.reportRange(lo, hi);
        expect(rows).toHaveLength(mobiles.length);
        const listName = 'Hui ā-tau "kōrero" \\ 测试 👋🏽 \u0001 </script>';
        for (const utcOffsetMinutes of [780, -210, 0, 345, -720, 840]) {
          const chunks: Uint8Array[] = [];
          for await (const bytes of history.campaigns.reportJson(lo, hi, { listName, utcOffsetMinutes })) chunks.push(bytes);
          const expected = referenceReportJson(rows, listName, utcOffsetMinutes);
          expect(Buffer.concat(chunks).toString('utf8')).toBe(expected);
          expect(Buffer.concat(chunks).equals(Buffer.from(expected, 'utf8'))).toBe(true);
          expect(JSON.parse(`[${expected}]`).map((r: { mobile: string }) => r.mobile)).toEqual(mobiles);
        }
        const none = campaignMessageRange(606, mobiles.length, mobiles.length + 5);
        const empty: Uint8Array[] = [];
        for await (const bytes of history.campaigns.reportJson(none.lo, none.hi, { listName, utcOffsetMinutes: 0 })) empty.push(bytes);
        expect(Buffer.concat(empty).length).toBe(0);
      });

      it("writes report dates in RFC 3339 at the campaign's offset, to the millisecond, before 1970 too", async () => {
        const at = Date.UTC(2026, 10, 23, 20, 30, 15, 7);
        const ms = [at, -1, Date.UTC(2026, 0, 1, 0, 0, 0, 500)].map((acceptedAt, p) =>
          message({ id: campaignMessageId(808, p), numericId: 4096 * 3000 + p, destination: `+6421808${p}`, acceptedAt }),
        );
        await history.insertMessages(ms, ms.map(accepted));
        await history.appendEvents([event(ms[0]!, 'sent', at), event(ms[0]!, 'received', at + 993)]);
        const { lo, hi } = campaignMessageRange(808, 0, 3);
        const dates = async (utcOffsetMinutes: number): Promise<string[][]> => {
          const chunks: Uint8Array[] = [];
          for await (const bytes of history.campaigns.reportJson(lo, hi, { listName: 'Rā 📅', utcOffsetMinutes })) chunks.push(bytes);
          const rows = JSON.parse(`[${Buffer.concat(chunks).toString('utf8')}]`) as Record<string, string>[];
          return rows.map((r) => [r.sent_date!, r.status_date!, r.timezone!]);
        };
        expect(await dates(780)).toEqual([
          ['2026-11-24T09:30:15.007+13:00', '2026-11-24T09:30:16.000+13:00', '+13:00'],
          ['', '1970-01-01T12:59:59.999+13:00', '+13:00'],
          ['', '2026-01-01T13:00:00.500+13:00', '+13:00'],
        ]);
        expect(await dates(-210)).toEqual([
          ['2026-11-23T17:00:15.007-03:30', '2026-11-23T17:00:16.000-03:30', '-03:30'],
          ['', '1969-12-31T20:29:59.999-03:30', '-03:30'],
          ['', '2025-12-31T20:30:00.500-03:30', '-03:30'],
        ]);
        expect(await dates(0)).toEqual([
          ['2026-11-23T20:30:15.007+00:00', '2026-11-23T20:30:16.000+00:00', '+00:00'],
          ['', '1969-12-31T23:59:59.999+00:00', '+00:00'],
          ['', '2026-01-01T00:00:00.500+00:00', '+00:00'],
        ]);
      });

      it('reports the campaign messages a database held before its report table existed', async () => {
        const ms = [0, 1].map((p) => message({ id: campaignMessageId(404, p), numericId: 9 * 4096 + p, destination: `+6421777${p}` }));
        await history.insertMessages(ms, ms.map(accepted));
        await history.appendEvents([event(ms[0]!, 'sent', BASE + 10), event(ms[0]!, 'received', BASE + 30)]);
        await history.close();
        // As a version without the report table left it: the same messages and events, nothing derived from them.
        await harness.exec([
          'DROP VIEW campaign_report_from_events',
          'DROP VIEW campaign_report_from_messages',
          'DROP TABLE campaign_report',
          'DROP TABLE history_backfills',
        ]);
        history = await harness.open();
        const { lo, hi } = campaignMessageRange(404, 0, 2);
        const expected = [
          { position: 0, messageNumericId: 9 * 4096, mobile: '+64217770', sentAt: BASE + 10, status: 'received', statusAt: BASE + 30 },
          { position: 1, messageNumericId: 9 * 4096 + 1, mobile: '+64217771', sentAt: 0, status: 'accepted', statusAt: BASE },
        ];
        expect(await history.campaigns.reportRange(lo, hi)).toEqual(expected);
        // Filled once: opened again, it neither copies the rows again nor loses them.
        await history.appendEvents([event(ms[1]!, 'queued', BASE + 5)]);
        await history.close();
        history = await harness.open();
        expect((await history.campaigns.reportRange(lo, hi)).map((r) => r.status)).toEqual(['received', 'queued']);
      });
    });
  });
}
