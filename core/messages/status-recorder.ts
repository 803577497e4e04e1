import { ADVANCE_AFTER_QUEUED, ADVANCE_REFUSED, ADVANCE_SKIPPED_QUEUED, type AdvanceOutcome, type HotState } from '../ports/state';
import type { MessageHistory, StatusEvent } from '../ports/message-history';
import { canAdvance, stageOf, type MessageStatus } from '../domain/message-status';

const QUEUED_STAGE = stageOf('queued');
const SUBMITTED_STAGE = stageOf('submitted');
/** How long after a start a refused change is looked into also when hot state is past it (what a crash left comes again then). */
const LOOK_PAST_MS = 5 * 60_000;
import { createVoidBatcher } from '../../lib/void-batcher';
import { partRows, takenPartRows } from '../ports/part-rows';
import { FifoMap } from '../../lib/fifo-map';
import { messagesByStatus } from '../../lib/metrics';

export interface StatusChange {
  messageId: string;
  applicationId: string;
  channel: string;
  status: MessageStatus;
  at: number;
  detail?: string;
  carrierId?: string;
  errorCode?: string;
  /** A carrier's report on its submit: applied only once the message reached `submitted` (hot-state's `onceSubmitted`). */
  onceSubmitted?: boolean;
  /** A long message's `submitted`: its other parts' carrier ids, each kept in history as a part row (part-rows.ts). */
  partCarrierIds?: readonly string[];
  /** A failure with partCarrierIds: the route those parts went by, kept with their rows (part-rows.ts takenPartRows). */
  route?: string;
  /**
   * Proven by the report after it in the batch (the `received` a read proves): refused, it is a duplicate as a
   * rule, not looked into (no look at hot state or history for each WhatsApp read).
   */
  proven?: boolean;
}

export interface StatusRecorder {
  /**
   * Applies the changes that move a message forward and records each applied
   * one as an event in history. Resolves once those events are durable.
   * Returns which changes were applied. The carrier's acceptance
   * (`submitted`) reported after a later stage (its receipt overtook the
   * carrier's answer) is not applied, nor counted or told to listeners, but
   * is still recorded: it is when the message left, and reports and campaign
   * counts read it from history. (Not `sent`: some carriers' webhooks report
   * it again after the worker did, and it is not a hand-over of its own.)
   */
  record(changes: readonly StatusChange[]): Promise<boolean[]>;
  /** Listeners see every applied change (callbacks hang off this). */
  onApplied(listener: (change: StatusChange) => void): void;
  /** Tells listeners about changes applied elsewhere (the `accepted` of intake). */
  announce(changes: readonly StatusChange[]): void;
  drain(): Promise<void>;
}

/** How long a change given back after a crash is not given back again (history has it long before). */
const REPAIRED_MEMORY_MS = 60_000;
const REPAIRED_MAX = 10_000;
const WRITTEN_MAX = 200_000;

/** A change's place among its message's tells: `wait` (none when nothing is before it) for the ones hot state took before it, `done` once told (or not). */
interface Turn {
  wait: Promise<void> | undefined;
  done(): void;
}

/**
 * Longest a tell waits for an earlier change of its message: a write that
 * hangs must not hold the message for good, but one that is only slow (a
 * flush of many after a bus outage, on a loaded machine: more than 5 s in a
 * trial) must not let a later change be told first.
 */
const TURN_WAIT_MS = 60_000;

/** One turn: whether it is over, and how to wake the turn after it (one at most: later turns queue behind the last). */
interface Slot {
  over: boolean;
  wake?: () => void;
}

/**
 * Tells of each message in the order hot state took its changes. Two batches
 * about one message run side by side (the bus's batch carrying a worker's
 * `submitted`, the receipt held aside until that applied), each telling once
 * its history write is in: the later one's write could finish first, and its
 * client heard `received` before `submitted`. A turn is taken as hot state
 * answers (the order it took them in), and a tell waits for the message's turn
 * before it, if that is not over: no promise nor timer otherwise.
 */
function createTellOrder() {
  const last = new Map<string, Slot>();
  return (id: string): Turn => {
    const before = last.get(id);
    const slot: Slot = { over: false };
    last.set(id, slot);
    const done = (): void => {
      if (slot.over) return;
      slot.over = true;
      if (last.get(id) === slot) last.delete(id);
      slot.wake?.();
    };
    if (!before || before.over) return { wait: undefined, done };
    const wait = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, TURN_WAIT_MS);
      before.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    return { wait, done };
  };
}

export function createStatusRecorder(deps: { history: MessageHistory; state: HotState; lostCheckMs?: number }): StatusRecorder {
  const listeners: ((change: StatusChange) => void)[] = [];
  const turnOf = createTellOrder();
  const lostCheckMs = deps.lostCheckMs ?? 1000;
  const startedAt = Date.now();
  const lookPastUntil = startedAt + LOOK_PAST_MS;
  /** Messages with a change applied to hot state whose history write and listeners are still to come, and how many. */
  const writing = new Map<string, number>();
  /** Changes lostInACrash gave back (message id | status → when): each is given back once. */
  const repaired = new FifoMap<string, number>();
  /** The furthest stage this process wrote to history, of the messages it wrote last (WRITTEN_MAX of them). */
  const written = new FifoMap<string, number>();
  const noteWritten = (id: string, stage: number): void => {
    const before = written.get(id);
    if (before !== undefined && before >= stage) return;
    if (before === undefined && written.size >= WRITTEN_MAX) written.shift();
    written.set(id, stage);
  };
  // Events from many handlers go to history together: one insert per flush.
  const events = createVoidBatcher<StatusEvent>(
    async (batch) => {
      await deps.history.appendEvents(batch);
    },
    { maxItems: 5000, maxDelayMs: 5, maxConcurrent: 2 },
  );

  /**
   * Indexes of refused reports that hot state took before a crash lost their history write: core moves hot
   * state first and writes history after, so a kill -9 in between left hot state at this status and history
   * behind it, with no event and no callback; the bus (or the carrier) hands the report over again, and it
   * is applied now. Any status after `accepted` (intake writes that one with the message); one look at hot
   * state for each refused one (a carrier's webhook echoing `sent` after the worker's costs that look),
   * then one history query for those hot state holds at exactly this status: rare. A change this core applied and is still writing is no loss; nor one
   * another core is writing (another partition's copy of the report): history is asked again after
   * `lostCheckMs`, by when that write is in.
   */
  async function lostInACrash(changes: readonly StatusChange[], refused: readonly number[], applied: readonly boolean[]): Promise<Map<number, MessageStatus>> {
    /** Lost change's index → the status history holds for its message. */
    const lost = new Map<number, MessageStatus>();
    // This batch's applied changes are about to be written: a refused copy of one of them is no loss, and they
    // are no other batch's write in progress.
    const ownWrites = new Map<string, number>();
    const ownKeys = new Set<string>();
    changes.forEach((c, i) => {
      if (!applied[i]) return;
      ownWrites.set(c.messageId, (ownWrites.get(c.messageId) ?? 0) + 1);
      ownKeys.add(`${c.messageId}|${c.status}`);
    });
    const writtenElsewhere = (id: string): boolean => (writing.get(id) ?? 0) > (ownWrites.get(id) ?? 0);
    const asked = refused.filter((i) => {
      const c = changes[i]!;
      return !c.proven && stageOf(c.status) >= QUEUED_STAGE && !writtenElsewhere(c.messageId) && !ownKeys.has(`${c.messageId}|${c.status}`);
    });
    if (asked.length === 0) return lost;
    // Hot state holds this status, or one past it: it took this report (or its copy) before, and perhaps later ones
    // (the worker's sent, submitted and the receipt all taken before the crash); history, asked next, says which it lost.
    const current = await Promise.all(asked.map((i) => deps.state.getStatus(changes[i]!.messageId)));
    const taken = asked.filter((i, k) => {
      const now = current[k]?.status;
      if (now === undefined) return false;
      if (now === changes[i]!.status) return true;
      // Past it: only in the minutes after this process started, when what a crash left comes again, and only for a
      // message this process has not written that far; else every webhook echo of a `sent` after the worker's
      // `submitted` would cost a history query.
      const c = changes[i]!;
      return Date.now() < lookPastUntil && stageOf(now) > stageOf(c.status) && (written.get(c.messageId) ?? -1) < stageOf(c.status);
    });
    if (taken.length === 0) return lost;
    let inHistory = new Map<string, { status: MessageStatus }>();
    const behindIn = async (among: readonly number[]): Promise<number[]> => {
      inHistory = await deps.history.latestStatuses([...new Set(among.map((i) => changes[i]!.messageId))]);
      return among.filter((i) => {
        const c = changes[i]!;
        const h = inHistory.get(c.messageId);
        // A stage this process wrote itself is no loss, whatever history's read shows of it yet.
        if ((written.get(c.messageId) ?? -1) >= stageOf(c.status)) return false;
        return h !== undefined && canAdvance(h.status, c.status, c.channel) && !writtenElsewhere(c.messageId);
      });
    };
    let behind = await behindIn(taken);
    if (behind.length === 0) return lost;
    await new Promise((r) => setTimeout(r, lostCheckMs));
    behind = await behindIn(behind);
    // Once per message and status: every part of a long message completes it when all their receipts come again
    // (in one batch, or in batches of other partitions side by side), and each would be written and told.
    const now = Date.now();
    for (const i of behind) {
      const key = `${changes[i]!.messageId}|${changes[i]!.status}`;
      const before = repaired.get(key);
      if (before !== undefined && now - before < REPAIRED_MEMORY_MS) continue;
      if (!repaired.has(key) && repaired.size >= REPAIRED_MAX) repaired.shift();
      repaired.set(key, now);
      lost.set(i, inHistory.get(changes[i]!.messageId)!.status);
    }
    return lost;
  }

  /**
   * The batch to write and tell with what a crash lost given back, and the `queued` a change skipped (right before
   * it): before a lost carrier's report on a message
   * whose history stops short of `submitted` (the worker's `sent` and `submitted` lost with it, and perhaps on
   * their way again behind it, on another partition), those two as the carrier's report proves them, as for a
   * receipt whose submit's report never came, so the client hears every step, in order.
   */
  function withLostGivenBack(
    changes: readonly StatusChange[],
    applied: readonly boolean[],
    lost: ReadonlyMap<number, MessageStatus>,
    along: ReadonlyMap<number, StatusChange>,
  ) {
    const all: StatusChange[] = [];
    const told: boolean[] = [];
    /** The index in `changes` each entry of `all` comes from. */
    const from: number[] = [];
    changes.forEach((c, i) => {
      const skipped = along.get(i);
      if (skipped) {
        all.push(skipped);
        told.push(true);
        from.push(i);
      }
      const history = lost.get(i);
      if (history !== undefined && c.carrierId && stageOf(c.status) > SUBMITTED_STAGE) {
        for (const status of ['sent', 'submitted'] as const) {
          if (!canAdvance(history, status)) continue;
          all.push({ ...c, status, detail: `${status} (the carrier reported on it)`, errorCode: '', onceSubmitted: undefined });
          told.push(true);
          from.push(i);
        }
      }
      all.push(c);
      told.push(applied[i]! || history !== undefined);
      from.push(i);
    });
    return { all, told, from };
  }

  /** Indexes of refused hand-overs whose message has since gone further. */
  async function lateHandOvers(changes: readonly StatusChange[], applied: readonly boolean[]): Promise<Set<number>> {
    const late = new Set<number>();
    const looks: Promise<void>[] = [];
    changes.forEach((c, i) => {
      if (applied[i] || c.status !== 'submitted') return;
      // Rare (a receipt before the submit's answer, or a report repeated): one look at hot state each.
      looks.push(
        deps.state.getStatus(c.messageId).then((current) => {
          if (current && stageOf(current.status) > stageOf(c.status)) late.add(i);
        }),
      );
    });
    await Promise.all(looks);
    return late;
  }

  /**
   * Writes the applied changes (and, `withLate`, late hand-overs) to history, then tells listeners of the applied ones,
   * each in its message's turn (`turns`).
   */
  async function writeAndTell(
    changes: readonly StatusChange[],
    applied: readonly boolean[],
    withLate: boolean,
    turns: readonly (Turn | undefined)[],
  ): Promise<void> {
    const late = withLate ? await lateHandOvers(changes, applied) : new Set<number>();
    const rows: StatusEvent[] = [];
    changes.forEach((c, i) => {
      if (!applied[i] && !late.has(i)) return;
      rows.push({
        messageId: c.messageId,
        applicationId: c.applicationId,
        status: c.status,
        at: c.at,
        detail: c.detail ?? '',
        carrierId: c.carrierId ?? '',
        errorCode: c.errorCode ?? '',
      });
      // A long message's other parts, each findable by its carrier id: written, never told.
      if (c.partCarrierIds) rows.push(...(c.status === 'submitted' ? partRows(c, c.partCarrierIds) : takenPartRows(c, c.partCarrierIds, c.route ?? '')));
      if (applied[i]) messagesByStatus.inc({ channel: c.channel, status: c.status });
    });
    await events.addAll(rows);
    /** The changes to tell, by message, in the batch's order: a message waiting for its turn holds up only itself. */
    const waiting = new Map<string, number[]>();
    for (const [i, c] of changes.entries()) {
      if (applied[i] || late.has(i)) noteWritten(c.messageId, stageOf(c.status));
      if (!applied[i]) continue;
      const turn = turns[i];
      const queued = waiting.get(c.messageId);
      if (queued) queued.push(i);
      else if (turn?.wait) waiting.set(c.messageId, [i]);
      else {
        for (const l of listeners) l(c);
        turn?.done();
      }
    }
    if (waiting.size === 0) return;
    await Promise.all(
      [...waiting.values()].map(async (queue) => {
        for (const i of queue) {
          const turn = turns[i];
          if (turn?.wait) await turn.wait;
          for (const l of listeners) l(changes[i]!);
          turn?.done();
        }
      }),
    );
  }

  const startWriting = (id: string): void => void writing.set(id, (writing.get(id) ?? 0) + 1);
  const doneWriting = (id: string): void => {
    const n = (writing.get(id) ?? 1) - 1;
    if (n > 0) writing.set(id, n);
    else writing.delete(id);
  };

  /**
   * The `queued` each change that skipped it proves (by the change's index): hot state did not take it as the
   * message went to its channel (a Redis restart), so whichever core applies the message's next status writes and
   * tells it first, in its turn. Hot state says so atomically, for every core alike.
   */
  function skippedQueued(changes: readonly StatusChange[], outcomes: readonly AdvanceOutcome[]): Map<number, StatusChange> {
    const along = new Map<number, StatusChange>();
    outcomes.forEach((o, i) => {
      if (o !== ADVANCE_SKIPPED_QUEUED) return;
      const c = changes[i]!;
      along.set(i, { messageId: c.messageId, applicationId: c.applicationId, channel: c.channel, status: 'queued', at: c.at, detail: '' });
    });
    return along;
  }

  /**
   * Skipped `queued` ones history does not hold yet: a Redis restored from an older snapshot, or a replica promoted
   * before it had them, forgot a `queued` that was written and told; told again it would be a second callback. One
   * history query, only where a skip was seen (rare); should it fail, they are told (a callback at least once).
   */
  async function notInHistory(along: Map<number, StatusChange>): Promise<Map<number, StatusChange>> {
    if (along.size === 0) return along;
    let inHistory: Map<string, { status: MessageStatus }>;
    try {
      inHistory = await deps.history.latestStatuses([...new Set([...along.values()].map((c) => c.messageId))]);
    } catch {
      return along;
    }
    for (const [i, c] of along) {
      const h = inHistory.get(c.messageId);
      if (h && stageOf(h.status) >= QUEUED_STAGE) along.delete(i);
    }
    return along;
  }

  /**
   * The `queued` a crash kept out of history though hot state took it (by the index of the change applied right
   * after it): core moves hot state as the job goes to its topic and writes history after, so a kill -9 in between
   * left the message at `queued` in hot state, told to nobody, while its worker went on. Looked for only in the
   * minutes after a start, for messages this process did not write `queued` for itself, and where history holds
   * the message short of `queued` since before this process started (one accepted since is another live core's,
   * which tells its `queued` itself): asked twice, `lostCheckMs` apart (a write in progress at the start), and once
   * per message.
   */
  async function queuedLostInACrash(changes: readonly StatusChange[], outcomes: readonly AdvanceOutcome[]): Promise<Map<number, StatusChange>> {
    const lost = new Map<number, StatusChange>();
    if (Date.now() >= lookPastUntil) return lost;
    outcomes.forEach((o, i) => {
      const c = changes[i]!;
      if (o !== ADVANCE_AFTER_QUEUED || (written.get(c.messageId) ?? -1) >= QUEUED_STAGE || writing.has(c.messageId)) return;
      if (repaired.has(`${c.messageId}|queued`)) return;
      lost.set(i, { messageId: c.messageId, applicationId: c.applicationId, channel: c.channel, status: 'queued', at: c.at, detail: '' });
    });
    const stillBehind = async (): Promise<void> => {
      let inHistory: Map<string, { status: MessageStatus; at: number }>;
      try {
        inHistory = await deps.history.latestStatuses([...new Set([...lost.values()].map((c) => c.messageId))]);
      } catch {
        lost.clear(); // history away: the message's later statuses are told; this one is not guessed at
        return;
      }
      for (const [i, c] of lost) {
        const h = inHistory.get(c.messageId);
        // Accepted since this process started: another core took its `queued` and is writing it, however slowly.
        if (!h || stageOf(h.status) >= QUEUED_STAGE || h.at >= startedAt || writing.has(c.messageId)) lost.delete(i);
      }
    };
    if (lost.size > 0) await stillBehind();
    if (lost.size > 0) {
      await new Promise((r) => setTimeout(r, lostCheckMs));
      await stillBehind();
    }
    const now = Date.now();
    for (const c of lost.values()) {
      if (!repaired.has(`${c.messageId}|queued`) && repaired.size >= REPAIRED_MAX) repaired.shift();
      repaired.set(`${c.messageId}|queued`, now);
    }
    return lost;
  }

  return {
    async record(changes) {
      if (changes.length === 0) return [];
      const outcomes = await deps.state.advanceStatusesNotingSkips(
        changes.map((c) => ({ id: c.messageId, status: c.status, at: c.at, carrierId: c.carrierId, onceSubmitted: c.onceSubmitted, channel: c.channel })),
      );
      const applied = outcomes.map((o) => o !== ADVANCE_REFUSED);
      // In the order hot state answered: no await between its answer and these.
      const turns = changes.map((c, i) => (applied[i] ? turnOf(c.messageId) : undefined));
      const along = await notInHistory(skippedQueued(changes, outcomes));
      for (const [i, c] of await queuedLostInACrash(changes, outcomes)) along.set(i, c);
      const writeAndTellWhile = async (
        which: readonly boolean[],
        withLate: boolean,
        list: readonly StatusChange[] = changes,
        listTurns: readonly (Turn | undefined)[] = turns,
      ): Promise<void> => {
        const ids = list.flatMap((c, i) => (which[i] ? [c.messageId] : []));
        for (const id of ids) startWriting(id);
        try {
          await writeAndTell(list, which, withLate, listTurns);
        } finally {
          for (const id of ids) doneWriting(id);
          // Told, or not (a write failed): the message's later tells go on.
          for (const t of turns) t?.done();
        }
      };
      // Refused ones a crash lost are given back with the applied ones, in the batch's order: the worker's `sent`
      // lost, its `submitted` applied now, are told in that order. (Looked into first: where one is lost, the
      // batch is told once history has been asked, up to lostCheckMs later; that is after a crash only.)
      const refused = applied.flatMap((a, i) => (a ? [] : [i]));
      let lost = new Map<number, MessageStatus>();
      if (refused.length > 0) {
        // Marked as being written from now, so that another batch's look for losses waits for these.
        const ids = changes.flatMap((c, i) => (applied[i] ? [c.messageId] : []));
        for (const id of ids) startWriting(id);
        try {
          lost = await lostInACrash(changes, refused, applied);
        } catch (err) {
          // Nothing of this batch is told: the message's later changes need not wait for its turns.
          for (const t of turns) t?.done();
          throw err;
        } finally {
          for (const id of ids) doneWriting(id);
        }
      }
      if (lost.size === 0 && along.size === 0) {
        await writeAndTellWhile(applied, true);
        return applied;
      }
      const { all, told, from } = withLostGivenBack(changes, applied, lost, along);
      try {
        // A change given back tells in its own turn where it has one; those it proves (sent, submitted, a skipped
        // queued) right before it.
        await writeAndTellWhile(
          told,
          true,
          all,
          from.map((i, k) => (from[k + 1] === i ? undefined : turns[i])),
        );
      } catch (err) {
        // Not written after all: the next hand-over of these reports gives them back again.
        for (const i of lost.keys()) repaired.delete(`${changes[i]!.messageId}|${changes[i]!.status}`);
        for (const c of along.values()) repaired.delete(`${c.messageId}|queued`);
        throw err;
      }
      return applied.map((a, i) => a || lost.has(i));
    },
    onApplied(listener) {
      listeners.push(listener);
    },
    announce(changes) {
      for (const c of changes) for (const l of listeners) l(c);
    },
    drain: () => events.drain(),
  };
}
