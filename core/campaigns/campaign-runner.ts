import type { Bus, Subscription } from '../ports/bus';
import { topicName, valueBytes } from '../ports/bus';
import { publishInParts } from '../ports/publish-in-parts';
import type { CampaignRecord, CampaignStore, MemberRow } from '../ports/campaign-store';
import type { MessageHistory, MessageRecord, StatusEvent } from '../ports/message-history';
import type { CampaignControlState, HotState } from '../ports/state';
import type { MessageIntake } from '../messages/message-intake';
import { HermodError } from '../../lib/errors';
import { createSemaphore } from '../../lib/semaphore';
import { createFairSlots } from '../../lib/fair-slots';
import { createCarrierPace } from './carrier-pace';
import type { Logger } from '../../lib/log';
import { campaignMessages, campaignsSending } from '../../lib/metrics';
import { campaignMessageId, campaignMessageRange, campaignOfMessage, positionOfCampaignMessage } from './campaign-message-ids';
import { campaignMessageRecord } from './campaign-message-records';
import { compileContent, renderedTooLong } from './message-template';

/** One slice of a campaign's members for a fan-out worker: positions [from, to). */
interface PartitionJob {
  campaignId: number;
  applicationId: string;
  from: number;
  to: number;
}

interface CampaignRunnerOptions {
  store: CampaignStore;
  bus: Bus;
  intake: MessageIntake;
  state: HotState;
  /** Where a cancelled campaign's members without a message get one that ended `dead`. */
  history: Pick<MessageHistory, 'insertMessages'>;
  log: Logger;
  /** Members per fan-out partition. */
  partitionSize?: number;
  /** Members a fan-out worker reads, and messages it hands over, at a time. */
  pageSize?: number;
  /** Fan-out waits while the SMS workers have more than this many messages in hand (carrier pacing); fewer for a slow carrier (carrier-pace.ts). */
  maxBacklog?: number;
  /** The backlog let wait, in seconds of what the SMS workers send (default 2). */
  backlogSeconds?: number;
  /** Partitions this core fans out at the same time (the others wait their turn, holding nothing). */
  partitionsAtOnce?: number;
  now?: () => number;
}

export interface CampaignRunner {
  /** A newly scheduled campaign, or one an operator resumed or cancelled (a cancelled one fans out at once, every message ending `dead`). */
  add(campaign: CampaignRecord): void;
  /** Hands to the SMS workers again the messages they parked while the campaign was paused. */
  resend(campaign: CampaignRecord, messageIds: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

const FANOUT_TOPIC = topicName('fanout');
const SMS_TOPIC = topicName('sms');
const DAY = 86_400_000;
export const CANCELLED = 'campaign cancelled';

/**
 * Campaigns at their schedule: the campaign is cut into partitions, published
 * as jobs on the fan-out topic; fan-out workers (this consumer group, in every
 * core) turn each partition into SMS messages, paced by the SMS workers'
 * backlog. Message ids derive from (campaign, position), so a partition handed
 * out again (a crash, a restart re-publishing an unfinished campaign) only
 * creates the messages that do not exist yet: nobody is sent to twice.
 */
export async function startCampaignRunner(options: CampaignRunnerOptions): Promise<CampaignRunner> {
  const { store, bus, intake, state, history, log } = options;
  const partitionSize = options.partitionSize ?? 10_000;
  const pageSize = options.pageSize ?? 2000;
  const maxBacklog = options.maxBacklog ?? 5000;
  // In flight by design: at most `partitionsAtOnce` partitions read members
  // (two pages each), and one page at a time is handed over once the SMS
  // workers' backlog is under maxBacklog, so whatever the campaign's size
  // this core holds at most maxBacklog + one page of messages on their way
  // to the carrier. Sixteen partitions handing over side by side held up to
  // sixteen pages beyond the backlog, long enough to reach V8's old generation.
  // Shared fairly between campaigns: a partition gives its slot up after a page when another campaign's waits, so a
  // campaign scheduled behind a million-member one (another application's) starts within a page, not after it.
  const partitions = createFairSlots(options.partitionsAtOnce ?? 2);
  const handOver = createSemaphore(1);
  const now = options.now ?? Date.now;
  const timers = new Map<number, NodeJS.Timeout>();
  /** Partitions this core published and has not seen finished, per campaign. */
  const open = new Map<number, { campaign: CampaignRecord; partitions: Set<number> }>();
  let stopping = false;

  const schedule = (c: CampaignRecord): void => {
    // Paused: resume adds it again. Cancelled: its fan-out is done.
    if (c.state === 'sent' || c.state === 'paused' || c.state === 'cancelled' || stopping) return;
    clearTimeout(timers.get(c.id));
    const cancelling = c.state === 'cancelling';
    const wait = cancelling ? 0 : Math.min(Math.max(0, c.scheduleAt - now()), DAY);
    const timer = setTimeout(() => {
      timers.delete(c.id);
      if (!cancelling && c.scheduleAt > now()) return schedule(c);
      fire(c).catch((err) => {
        log.error('could not start a campaign; retrying in 5 s', { err, campaign: c.id });
        const retry = setTimeout(() => schedule(c), 5000);
        timers.set(c.id, retry);
      });
    }, wait);
    timer.unref();
    timers.set(c.id, timer);
  };

  const fire = async (scheduled: CampaignRecord): Promise<void> => {
    // Read again: an operator may have paused or cancelled it while it waited for its time.
    const c = (await store.getCampaign(scheduled.applicationId, scheduled.id)) ?? scheduled;
    if (c.state === 'paused' || c.state === 'cancelled' || c.state === 'sent') return;
    const jobs: PartitionJob[] = [];
    for (let from = 0; from < c.memberCount; from += partitionSize) {
      jobs.push({ campaignId: c.id, applicationId: c.applicationId, from, to: Math.min(c.memberCount, from + partitionSize) });
    }
    open.set(c.id, { campaign: c, partitions: new Set(jobs.map((j) => j.from)) });
    campaignsSending.set(open.size);
    await publishInParts(
      bus,
      FANOUT_TOPIC,
      jobs.map((j) => ({ key: `${j.campaignId}:${j.from}`, value: Buffer.from(JSON.stringify(j)) })),
    );
    if (c.state === 'scheduled') await store.upsertCampaign({ ...c, state: 'sending', updatedAt: Math.max(now(), c.updatedAt + 1) });
    log.info('campaign started', { campaign: c.id, members: c.memberCount, partitions: jobs.length });
  };

  const finished = async (job: PartitionJob): Promise<void> => {
    const entry = open.get(job.campaignId);
    if (!entry) return;
    entry.partitions.delete(job.from);
    if (entry.partitions.size > 0) return;
    open.delete(job.campaignId);
    campaignsSending.set(open.size);
    // Read again: an operator may have paused or cancelled it since it started.
    const c = (await store.getCampaign(entry.campaign.applicationId, job.campaignId)) ?? entry.campaign;
    const next = c.state === 'cancelling' ? 'cancelled' : c.state === 'scheduled' || c.state === 'sending' ? 'sent' : undefined;
    if (next) await store.upsertCampaign({ ...c, state: next, updatedAt: Math.max(now(), c.updatedAt + 2) });
    log.info(next === 'cancelled' ? 'cancelled campaign ended' : 'campaign handed to its channel', { campaign: job.campaignId });
  };

  const pace = createCarrierPace({ maxBacklog, seconds: options.backlogSeconds });
  /** Waits until the backlog is down to the pace's target; resolves with it (the most to hand over at once). */
  const waitForCarrier = async (): Promise<number> => {
    pace.startWait();
    for (;;) {
      // Messages a refusing carrier gave back to be tried later wait in this core's memory: counted as backlog too.
      const backlog = (await bus.lag(SMS_TOPIC, 'sms-workers')) + intake.deferred;
      pace.observe(backlog);
      const target = pace.target();
      if (backlog <= target) return target;
      // Leave the job unacknowledged on shutdown: it is handed out again later.
      if (stopping) throw new HermodError('unavailable', 'core is stopping');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const controlOf = async (campaignId: number): Promise<CampaignControlState> => (await state.campaignControls([campaignId]))[0] ?? 'running';

  /**
   * Messages that never go to a carrier, stored as accepted and, at once,
   * ended: `dead` for those of a cancelled campaign, `rejected` for a
   * member's message its parameters took over 1,600 characters.
   */
  const storeEnded = async (ended: readonly { record: MessageRecord; status: 'dead' | 'rejected'; detail: string; errorCode: string }[]): Promise<void> => {
    if (ended.length === 0) return;
    const at = now();
    const event = (r: MessageRecord, status: 'accepted' | 'dead' | 'rejected', detail = '', errorCode = ''): StatusEvent => ({
      messageId: r.id,
      applicationId: r.applicationId,
      status,
      at,
      detail,
      carrierId: '',
      errorCode,
    });
    await history.insertMessages(
      ended.map((e) => e.record),
      ended.flatMap((e) => [event(e.record, 'accepted'), event(e.record, e.status, e.detail, e.errorCode)]),
    );
  };
  const storeDead = (records: readonly MessageRecord[]): Promise<void> =>
    storeEnded(records.map((record) => ({ record, status: 'dead' as const, detail: CANCELLED, errorCode: '' })));

  /**
   * The messages of one page of members: those not removed at import as opted
   * out and without a message yet; `tooLong` the ones whose filled-in text no
   * SMS interface would take (they end `rejected`, never reaching a carrier).
   * A member who opted out since the campaign was scheduled gets a message
   * all the same, which intake's screen ends `blocked` (as it does every
   * scheduled message whose handset opted out before its time): the report
   * and the counts show it, where leaving it out counted it nowhere.
   */
  const pageRecords = async (
    c: CampaignRecord,
    members: readonly MemberRow[],
    existing: ReadonlySet<string>,
  ): Promise<{ records: MessageRecord[]; tooLong: { record: MessageRecord; status: 'rejected'; detail: string; errorCode: string }[] }> => {
    const render = compileContent(c.content);
    const at = now();
    const records: MessageRecord[] = [];
    const tooLong: { record: MessageRecord; status: 'rejected'; detail: string; errorCode: string }[] = [];
    for (const m of members) {
      // remove_opt_outs left out whoever had opted out at import; without it they are sent to and end as blocked.
      if (c.removeOptOuts && m.optedOut) continue;
      if (existing.has(campaignMessageId(c.id, m.position))) continue;
      const record = campaignMessageRecord(c, m, render(m), at);
      const why = renderedTooLong(record.content);
      if (why) tooLong.push({ record, status: 'rejected', detail: why, errorCode: 'too_long' });
      else records.push(record);
    }
    return { records, tooLong };
  };

  /**
   * One partition, page by page: members are read `pageSize` at a time (the
   * next page while this one is handed over), so a partition never holds more
   * than two pages of members and their messages, whatever its size.
   */
  const fanOut = async (job: PartitionJob): Promise<void> => {
    const c = open.get(job.campaignId)?.campaign ?? (await store.getCampaign(job.applicationId, job.campaignId));
    if (!c) {
      log.warn('fan-out job for an unknown campaign', { campaign: job.campaignId });
      return;
    }
    let existing: ReadonlySet<string> = new Set();
    const read = (from: number): Promise<MemberRow[]> => {
      const page = from < job.to ? store.readMembers(c.id, from, Math.min(pageSize, job.to - from)) : Promise.resolve([]);
      page.catch(() => undefined); // awaited below, unless an earlier page failed
      return page;
    };
    /** One page of members, in this core's one hand-over at a time: whether the partition goes on. */
    const handOverPage = (members: readonly MemberRow[]): Promise<boolean> =>
      handOver.run(async () => {
        // The operator's word, once per page: a pause stops here (resume hands the partition out again), a cancel stores the rest as dead.
        if ((await controlOf(c.id)) === 'paused') return false;
        const { records, tooLong } = await pageRecords(c, members, existing);
        if (records.length === 0 && tooLong.length === 0) return true;
        let ended = false;
        // In pieces of the pace's target: a slow carrier's queue stays seconds long, whatever the page's size.
        for (let at = 0; at < records.length || !ended; ) {
          const most = records.length > 0 && (await controlOf(c.id)) !== 'cancelled' ? await waitForCarrier() : records.length;
          const control = await controlOf(c.id);
          if (control === 'paused') return false;
          if (control === 'cancelled') {
            await storeDead([...records.slice(at), ...(ended ? [] : tooLong.map((t) => t.record))]);
            return true;
          }
          if (!ended) {
            await storeEnded(tooLong);
            ended = true;
          }
          if (at >= records.length) break;
          const piece = records.slice(at, at + Math.max(1, most));
          at += piece.length;
          // Waits out a bus that refuses them: the partition job stays unacknowledged, and the next page is not read meanwhile.
          const results = await intake.acceptRecords(piece, { untilHandedOver: true });
          campaignMessages.inc(results.filter((r) => r.ok).length);
          const failed = results.find((r) => !r.ok);
          if (failed && !failed.ok) throw failed.error;
        }
        return true;
      });
    const done = await partitions.run(c.id, async (turn) => {
      // Empty unless the partition was handed out before (a crash, a restart): at most one partition's ids.
      const { lo, hi } = campaignMessageRange(c.id, job.from, job.to);
      existing = await store.messageIdsInRange(lo, hi);
      let next = read(job.from);
      for (;;) {
        const members = (await next).filter((m) => m.position < job.to);
        if (members.length === 0) return true;
        next = read(members[members.length - 1]!.position + 1);
        if (!(await handOverPage(members))) return false;
        await turn();
      }
    });
    if (done) await finished(job);
  };

  const subscription: Subscription = await bus.subscribe(
    FANOUT_TOPIC,
    async (batch) => {
      for (const r of batch) await fanOut(JSON.parse(valueBytes(r.value).toString('utf8')) as PartitionJob);
    },
    // In one process, every partition job reaches the fair slots above, not only the first of each bus partition. Not on
    // Redis (a job held past its idle time counts as abandoned, and another core would take it) nor Kafka (one at a time):
    // there a job waits behind the jobs before it on its topic partition.
    { group: 'campaign-fanout', maxBatch: 1, inFlight: bus.local ? 64 : 1 },
  );

  // Campaigns scheduled before this start, and ones a crash interrupted.
  for (const c of await store.listUnsentCampaigns()) schedule(c);

  /** The members at these positions, page by page (positions sorted). */
  const membersAt = async function* (c: CampaignRecord, messageIds: readonly string[]): AsyncGenerator<MemberRow[]> {
    const positions = [...new Set(messageIds.filter((id) => campaignOfMessage(id) === c.id).map(positionOfCampaignMessage))].sort((a, b) => a - b);
    const wanted = new Set(positions);
    for (let i = 0; i < positions.length; ) {
      const members = await store.readMembers(c.id, positions[i]!, pageSize);
      if (members.length === 0) return;
      yield members.filter((m) => wanted.has(m.position));
      const last = members[members.length - 1]!.position;
      while (i < positions.length && positions[i]! <= last) i++;
    }
  };

  return {
    add: schedule,
    async resend(c, messageIds) {
      const render = compileContent(c.content);
      for await (const members of membersAt(c, messageIds)) {
        // Screened again: a member may have replied STOP, or been blocked, while the campaign was paused.
        if (members.length > 0) await intake.dispatchHeld(members.map((m) => campaignMessageRecord(c, m, render(m), now())));
      }
    },
    async stop() {
      stopping = true;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      await subscription.close();
    },
  };
}
