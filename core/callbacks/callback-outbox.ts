import fs from 'node:fs';
import path from 'node:path';
import { FifoMap } from '../../lib/fifo-map';
import type { Logger } from '../../lib/log';
import { callbacksOwed, callbacksOwedOnDisk, callbacksOwedPerApplication, callbacksUnacknowledged } from '../../lib/metrics';
import type { AcknowledgedPositions, BusPosition } from '../ports/bus';
import type { CallbackJob } from './callback-job';
import { openCallbackDiskQueues } from './callback-disk-queues';
import { openOutboxJournal } from './callback-outbox-journal';
import {
  encodeAdmitted,
  encodeEvicted,
  encodeKept,
  encodeLookedUp,
  encodeLookups,
  encodeOwed,
  encodePending,
  encodePublished,
  encodeQueueState,
  encodeSettled,
  type KeptJob,
  keptLine,
  lookupLine,
  type OwedLookup,
  owedLine,
  pendingLine,
} from './callback-outbox-format';

export interface CallbackOutboxOptions {
  /** Directory of the outbox (under the data directory). */
  dir: string;
  log: Logger;
  /** fdatasync every append: survives power loss, not only process death. */
  fsync?: boolean;
  /** Rewrite the journal with only what is owed once it is this big and at least half settled or superseded (default 8 MiB). */
  compactBytes?: number;
  /** Most owed jobs kept in memory; the rest wait on disk, per application (default 50,000). */
  inMemory?: number;
  /** Size of a segment of an application's queue on disk (default 4 MiB). */
  segmentBytes?: number;
  /**
   * How many of the latest settled event ids are kept, so a job owed again under one is not told twice (default
   * 20,000, fewer for a small `compactBytes`: compaction writes them again, in at most a quarter of it).
   */
  recentlySettled?: number;
}

/** Who tries the jobs in memory (the dispatcher's queues). */
export interface OutboxConsumer {
  /** A job came into memory: behind the jobs of its message already given. */
  add(job: CallbackJob): void;
  /** Whether the job may leave memory now (it is not being tried). */
  canRemove(job: CallbackJob): boolean;
  /** The job left memory for disk: it will be given again later. */
  remove(job: CallbackJob): void;
}

/**
 * The callbacks this core owes, kept so they survive kill -9: a job is on
 * disk (page cache; with `fsync`, the device) before `owe` returns, so before
 * the bus record that carried it is acknowledged, and it stays owed until it
 * is settled (delivered, refused, given up).
 *
 * At most `inMemory` owed jobs are held in memory, in a journal
 * (`outbox.ndjson`) that a restart replays, so a restart reads only about that
 * much. The rest wait in a FIFO per application on disk (disk-queues) and are
 * read back, in order, as jobs in memory are settled. Memory is shared fairly:
 * with n applications owed, one may hold at most 1/n of it while others wait
 * on disk; when memory is full with one application's jobs (its receiver is
 * down) and another has jobs waiting on disk, the newest jobs of the largest
 * are moved back to the head of its queue on disk, never one being tried, so
 * a message's jobs keep their order.
 *
 * Jobs made for a bus that keeps records are held (`hold`) only until
 * published (`handOver`); one held at a crash is owed again at the next start.
 * On a bus that can lose what it took (Redis without persistence), a job
 * handed over with its position is kept until the consumers' group has
 * acknowledged it (`acknowledged`), for its producer to publish again if the
 * bus lost it (`unacknowledged`, then `hold` again); the consumer's outbox
 * owes it from then on, so it is not counted as owed here.
 */
export interface CallbackOutbox {
  /** Gives every job in memory to `consumer` now, and each later one as it comes into memory. */
  attach(consumer: OutboxConsumer): void;
  /** Jobs this core is to deliver, in order: in memory if there is room, else behind their application's jobs on disk. */
  owe(jobs: readonly CallbackJob[]): void;
  /** A retry's new state (attempt, notBefore) of a job in memory. */
  retry(job: CallbackJob): void;
  /** Jobs in memory that no longer need to be kept (unknown ones are ignored). */
  settle(eventIds: readonly string[]): void;
  /** Jobs about to be published on a bus that keeps records. */
  hold(jobs: readonly CallbackJob[]): void;
  /**
   * The bus took these held jobs (each exactly as held). With `positions` (one per job, a bus that can lose
   * records), each is kept at its position until acknowledged; without, it is no longer kept.
   */
  handOver(jobs: readonly CallbackJob[], positions?: readonly BusPosition[]): void;
  /** Drops the kept jobs the group has acknowledged (a consumer's outbox owes them); how many. */
  acknowledged(acks: Pick<AcknowledgedPositions, 'covers'>): number;
  /** Jobs kept after publishing until acknowledged, in the order they were handed over. */
  unacknowledged(): KeptJob[];
  /**
   * Status changes whose message is not in memory, kept until their lookup
   * ends: a restart gives them back (`lookups`) to be looked up again, so a
   * change acknowledged on the bus still makes its callback.
   */
  awaitLookups(lookups: readonly OwedLookup[]): void;
  /** These lookups ended: their jobs are owed or held, or they make none. */
  lookedUp(eventIds: readonly string[]): void;
  /** Lookups that have not ended, in the order they were kept. */
  lookups(): OwedLookup[];
  /** Jobs owed in memory, in the order they came into memory. */
  owed(): CallbackJob[];
  /** What each application is owed (by id), in memory, on disk and held for a bus, tried or not (not those kept until acknowledged): `hermod status` and the metric read this. */
  owedByApplication(): Map<string, number>;
  /** Every job owed or held, in memory and on disk (not those kept until acknowledged). */
  readonly size: number;
  readonly inMemory: number;
  readonly onDisk: number;
  /** Bytes of the journal (tests, metrics). */
  readonly fileBytes: number;
  close(): void;
}

const FILE = 'outbox.ndjson';
/** An `S` line of a UUID event id, as compaction writes it again. */
const SETTLED_LINE_BYTES = 38;
/** Most jobs read from disk in one journal line. */
const ADMIT_BATCH = 512;

interface Entry {
  job: CallbackJob;
  bytes: number;
}

export function openCallbackOutbox(options: CallbackOutboxOptions): CallbackOutbox {
  const { dir, log } = options;
  const compactBytes = options.compactBytes ?? 8 * 1024 * 1024;
  const limit = options.inMemory ?? 50_000;
  const settledKept = options.recentlySettled ?? Math.min(20_000, Math.floor(compactBytes / 4 / SETTLED_LINE_BYTES));
  fs.mkdirSync(dir, { recursive: true });

  const memory = new Map<string, Entry>();
  /** Jobs in memory per application, in the order they came into memory. */
  const byApplication = new Map<string, Map<string, CallbackJob>>();
  const pending = new Map<string, Entry>();
  /** Published on a bus that can lose records, until the group acknowledges them. */
  const kept = new Map<string, Entry & { position: BusPosition }>();
  const lookups = new Map<string, { lookup: OwedLookup; bytes: number }>();
  let liveBytes = 0;
  let closed = false;
  let consumer: OutboxConsumer | undefined;
  /**
   * The latest settled event ids, kept across restarts (the journal's `S` lines, written again by compaction). A
   * job owed again under one is the same event told again: a bus record redelivered, or a status an IM message's
   * resumption tells again because it cannot know it was told before the stop. It is dropped, not sent twice.
   */
  const recentlySettled = new FifoMap<string, true>();
  const settledNow = (eventId: string): void => {
    recentlySettled.set(eventId, true);
    if (recentlySettled.size > settledKept) recentlySettled.shift();
  };

  const remember = (job: CallbackJob, bytes: number): boolean => {
    const before = memory.get(job.eventId);
    if (before) liveBytes -= before.bytes;
    memory.set(job.eventId, { job, bytes });
    liveBytes += bytes;
    let jobs = byApplication.get(job.applicationId);
    if (!jobs) {
      jobs = new Map();
      byApplication.set(job.applicationId, jobs);
    }
    jobs.set(job.eventId, job);
    return before === undefined;
  };
  const forget = (eventId: string): CallbackJob | undefined => {
    const before = memory.get(eventId);
    if (!before) return undefined;
    memory.delete(eventId);
    liveBytes -= before.bytes;
    const jobs = byApplication.get(before.job.applicationId)!;
    jobs.delete(eventId);
    if (jobs.size === 0) byApplication.delete(before.job.applicationId);
    return before.job;
  };
  const inMemoryOf = (applicationId: string): number => byApplication.get(applicationId)?.size ?? 0;

  // Replay the journal, then open the queues on disk with the state it recorded.
  const { journal, replayed } = openOutboxJournal(path.join(dir, FILE), options.fsync ?? false);
  const append = (buf: Buffer): void => journal.append(buf);
  if (replayed) {
    for (const job of replayed.owed.values()) remember(job, replayed.bytes.get(job.eventId) ?? 0);
    for (const { job, position } of replayed.kept.values()) {
      const bytes = replayed.bytes.get(job.eventId) ?? 0;
      kept.set(job.eventId, { job, position, bytes });
      liveBytes += bytes;
    }
    for (const lookup of replayed.lookups.values()) {
      const bytes = replayed.bytes.get(`L${lookup.eventId}`) ?? 0;
      lookups.set(lookup.eventId, { lookup, bytes });
      liveBytes += bytes;
    }
    for (const id of replayed.settled.slice(-settledKept)) if (!memory.has(id)) settledNow(id);
    if (replayed.damaged > 0) log.warn('callback outbox: damaged lines skipped', { lines: replayed.damaged });
  }
  const disk = openCallbackDiskQueues({
    dir: path.join(dir, 'queues'),
    log,
    fsync: options.fsync,
    segmentBytes: options.segmentBytes,
    states: replayed?.queues ?? new Map(),
  });

  /** Writes what is in memory and where each queue on disk stands to a new journal and swaps it in. */
  const rewrite = (): void =>
    journal.replace(
      Buffer.concat([
        ...disk.applications().map((a) => encodeQueueState(a, disk.state(a))),
        encodeOwed([...memory.values()].map((e) => e.job)),
        encodePending([...pending.values()].map((e) => e.job)),
        encodeKept([...kept.values()]),
        encodeLookups([...lookups.values()].map((e) => e.lookup)),
        encodeSettled([...recentlySettled.keys()]),
      ]),
    );
  const maybeCompact = (): void => {
    // At twice what is owed in memory, so a restart replays at most about that (a restart's time follows the limit, not the backlog).
    if (journal.bytes >= compactBytes && journal.bytes >= 2 * liveBytes) rewrite();
  };
  const changed = (): void => {
    callbacksOwed.set(memory.size + pending.size + disk.total);
    callbacksOwedOnDisk.set(disk.total);
    callbacksUnacknowledged.set(kept.size);
  };

  /** Applications owed something, in memory or on disk. */
  const owedApplications = (): Set<string> => {
    const apps = new Set(byApplication.keys());
    for (const a of disk.applications()) apps.add(a);
    return apps;
  };
  /** The share of memory one application may hold while it and every application in `owedApps` want some. */
  const shareFor = (applicationId: string, owedApps = owedApplications()): number =>
    Math.max(1, Math.floor(limit / (owedApps.size + (owedApps.has(applicationId) ? 0 : 1))));

  const give = (job: CallbackJob): void => consumer?.add(job);

  /** Fewest jobs read from disk at once (fewer only when that is all an application may hold or has). */
  const minBatch = Math.max(1, Math.min(ADMIT_BATCH, Math.floor(limit / 20)));
  let turn = 0;
  /** Reads jobs from disk into memory while there is room, fairly across applications. */
  const pump = (): void => {
    pumpQueued = false;
    if (closed) return;
    for (;;) {
      const waiting = disk.applications();
      if (waiting.length === 0) return;
      let moved = false;
      turn = (turn + 1) % waiting.length;
      for (let k = 0; k < waiting.length; k++) {
        const applicationId = waiting[(turn + k) % waiting.length]!;
        const share = shareFor(applicationId);
        const room = Math.min(share - inMemoryOf(applicationId), limit - memory.size, ADMIT_BATCH);
        // Read in batches, not one job per settled one: each read is a journal line and a file read.
        if (room < Math.min(share, minBatch, disk.count(applicationId)) || room <= 0) continue;
        const peeked = disk.peek(applicationId, room);
        if (!peeked || peeked.lines === 0) continue;
        // A job already in memory (a bus record delivered twice) is not taken twice.
        const jobs = peeked.jobs.filter((j) => !memory.has(j.eventId));
        const line = encodeAdmitted(applicationId, peeked.segment, peeked.offset, jobs);
        append(line);
        disk.taken(applicationId, peeked);
        for (const job of jobs) remember(job, Math.ceil(line.length / jobs.length));
        for (const job of jobs) give(job);
        moved = true;
      }
      if (moved) {
        changed();
        maybeCompact();
        continue;
      }
      if (!makeRoom(waiting)) return;
    }
  };
  let pumpQueued = false;
  let retryPump: NodeJS.Timeout | undefined;
  const schedulePump = (): void => {
    if (pumpQueued || closed) return;
    pumpQueued = true;
    queueMicrotask(() => {
      try {
        pump();
      } catch (err) {
        log.error('could not read owed callbacks from disk', { err });
      }
    });
  };

  /**
   * Some application under its share has jobs on disk, but memory has no
   * room left for a batch of them: moves the newest jobs of the application
   * holding the most (over its share) back to the head of its queue on disk.
   * Whether any moved.
   */
  const makeRoom = (waiting: string[]): boolean => {
    const free = limit - memory.size;
    let need = 0;
    for (const a of waiting) {
      const wants = Math.min(shareFor(a) - inMemoryOf(a), disk.count(a));
      if (wants > 0 && Math.min(wants, minBatch) > free) need += wants;
    }
    if (need === 0) return false;
    let largest: string | undefined;
    for (const [a, jobs] of byApplication) if (!largest || jobs.size > inMemoryOf(largest)) largest = a;
    if (!largest) return false;
    const over = inMemoryOf(largest) - shareFor(largest);
    if (over <= 0) return false;
    return evict(largest, Math.min(over, Math.max(need - free, Math.ceil(limit / 20)))) > 0;
  };

  const evict = (applicationId: string, most: number): number => {
    const jobs = [...byApplication.get(applicationId)!.values()];
    const out: CallbackJob[] = [];
    // Newest first, skipping jobs being tried: of each message, only its newest jobs leave, so it keeps its order.
    for (let i = jobs.length - 1; i >= 0 && out.length < most; i--) if (!consumer || consumer.canRemove(jobs[i]!)) out.push(jobs[i]!);
    if (out.length === 0) return 0;
    out.reverse();
    const segment = disk.writeHead(applicationId, out);
    try {
      append(
        encodeEvicted(
          applicationId,
          segment,
          out.map((j) => j.eventId),
        ),
      );
    } catch (err) {
      disk.discard(applicationId, segment);
      throw err;
    }
    disk.placed(applicationId, segment, out.length);
    // Newest first, as they were chosen: a message is never left with a gap.
    for (const job of out.reverse()) {
      forget(job.eventId);
      consumer?.remove(job);
    }
    log.info('callbacks moved from memory to disk to make room for other applications', { application: applicationId, jobs: out.length });
    return out.length;
  };

  if (replayed) {
    // Each queue's state is written again, so no line about a segment removed since applies to a later segment of the same number.
    const applications = new Set([...replayed.queues.keys(), ...disk.applications()]);
    if (applications.size > 0) append(Buffer.concat([...applications].map((a) => encodeQueueState(a, disk.state(a)))));
    maybeCompact();
  }
  if (memory.size + disk.total > 0) log.info('callbacks owed from before the restart', { inMemory: memory.size, onDisk: disk.total });
  if (kept.size > 0) log.info('callbacks published before the restart and not yet acknowledged', { jobs: kept.size });

  const owe = (jobs: readonly CallbackJob[]): void => {
    if (jobs.length === 0) return;
    const direct: CallbackJob[] = [];
    const toDisk = new Map<string, CallbackJob[]>();
    const extra = new Map<string, number>();
    const seen = new Set<string>();
    const owedApps = owedApplications();
    for (const job of jobs) {
      // A job already owed in memory or earlier in the batch: a bus record delivered twice. Or one settled lately: told already.
      if (memory.has(job.eventId) || seen.has(job.eventId) || recentlySettled.has(job.eventId)) continue;
      seen.add(job.eventId);
      const a = job.applicationId;
      const held = inMemoryOf(a) + (extra.get(a) ?? 0);
      if (!toDisk.has(a) && disk.count(a) === 0 && memory.size + direct.length < limit && held < shareFor(a, owedApps)) {
        direct.push(job);
        extra.set(a, (extra.get(a) ?? 0) + 1);
        owedApps.add(a);
      } else {
        const list = toDisk.get(a) ?? [];
        list.push(job);
        toDisk.set(a, list);
        owedApps.add(a);
      }
    }
    // One buffer for the batch: each job's own size is counted from its line.
    const lines = direct.map(owedLine);
    if (lines.length > 0) append(Buffer.from(lines.join(''), 'utf8'));
    for (const [a, list] of toDisk) disk.append(a, list);
    direct.forEach((j, i) => {
      remember(j, Buffer.byteLength(lines[i]!, 'utf8'));
    });
    for (const job of direct) give(job);
    changed();
    maybeCompact();
    if (toDisk.size > 0) schedulePump();
  };

  /** Appends one line per item and keeps each under its event id with its line's bytes (held jobs, lookups). */
  const keepLines = <I extends { eventId: string }, E extends { bytes: number }>(
    kept: Map<string, E>,
    items: readonly I[],
    line: (item: I) => string,
    entry: (item: I) => Omit<E, 'bytes'>,
  ): void => {
    const lines = items.map(line);
    append(Buffer.from(lines.join(''), 'utf8'));
    items.forEach((item, i) => {
      const before = kept.get(item.eventId);
      if (before) liveBytes -= before.bytes;
      const bytes = Buffer.byteLength(lines[i]!, 'utf8');
      kept.set(item.eventId, { ...entry(item), bytes } as E);
      liveBytes += bytes;
    });
    maybeCompact();
  };
  /** Appends the line that ends the kept entries among `eventIds`, and forgets them; whether there were any. */
  const dropLines = (kept: Map<string, { bytes: number }>, encode: (ids: readonly string[]) => Buffer, eventIds: readonly string[]): boolean => {
    const known = [...new Set(eventIds)].filter((id) => kept.has(id));
    if (known.length === 0) return false;
    append(encode(known));
    for (const id of known) {
      liveBytes -= kept.get(id)!.bytes;
      kept.delete(id);
    }
    maybeCompact();
    return true;
  };

  // Jobs held for a bus at the last stop were never handed over: this core owes them.
  if (replayed && replayed.pending.size > 0) {
    const held = [...replayed.pending.values()];
    owe(held);
    append(encodePublished(held.map((j) => j.eventId)));
  }
  changed();
  /** What each application is owed (cheap per change, O(applications + held) per reading). */
  const owedByApplication = (): Map<string, number> => {
    const owed = new Map<string, number>();
    for (const [a, jobs] of byApplication) owed.set(a, jobs.size);
    for (const a of disk.applications()) owed.set(a, (owed.get(a) ?? 0) + disk.count(a));
    for (const { job } of pending.values()) owed.set(job.applicationId, (owed.get(job.applicationId) ?? 0) + 1);
    return owed;
  };
  /** Read at a scrape. */
  const unwatchOwed = callbacksOwedPerApplication.watch(owedByApplication);

  return {
    attach(c) {
      consumer = c;
      for (const { job } of memory.values()) c.add(job);
      schedulePump();
    },
    owe,
    retry(job) {
      if (!memory.has(job.eventId)) return;
      const line = encodeOwed([job]);
      append(line);
      remember(job, line.length);
      maybeCompact();
      // A job that was being tried may leave memory now, for an application waiting on disk (at most every 100 ms: choosing is O(memory)).
      if (disk.total > 0 && memory.size > limit - minBatch && !retryPump) {
        retryPump = setTimeout(() => {
          retryPump = undefined;
          schedulePump();
        }, 100);
        retryPump.unref();
      }
    },
    settle(eventIds) {
      const known = [...new Set(eventIds)].filter((id) => memory.has(id));
      if (known.length === 0) return;
      append(encodeSettled(known));
      for (const id of known) {
        forget(id);
        settledNow(id);
      }
      changed();
      maybeCompact();
      schedulePump();
    },
    hold(jobs) {
      if (jobs.length === 0) return;
      keepLines(pending, jobs, pendingLine, (job) => ({ job }));
      // A kept job held again (its bus lost it) is kept no more: its `P` line says so on replay too.
      for (const job of jobs) {
        const before = kept.get(job.eventId);
        if (!before) continue;
        liveBytes -= before.bytes;
        kept.delete(job.eventId);
      }
      changed();
    },
    handOver(jobs, positions) {
      if (!positions) {
        if (
          dropLines(
            pending,
            encodePublished,
            jobs.filter((j) => pending.get(j.eventId)?.job === j).map((j) => j.eventId),
          )
        )
          changed();
        return;
      }
      const lines: string[] = [];
      const moving: (Entry & { position: BusPosition })[] = [];
      jobs.forEach((job, i) => {
        const held = pending.get(job.eventId);
        if (held?.job !== job) return;
        const line = keptLine(job.eventId, positions[i]!);
        lines.push(line);
        moving.push({ job, position: positions[i]!, bytes: held.bytes + Buffer.byteLength(line, 'utf8') });
      });
      if (moving.length === 0) return;
      append(Buffer.from(lines.join(''), 'utf8'));
      for (const entry of moving) {
        const held = pending.get(entry.job.eventId)!;
        pending.delete(entry.job.eventId);
        liveBytes += entry.bytes - held.bytes;
        kept.set(entry.job.eventId, entry);
      }
      changed();
      maybeCompact();
    },
    acknowledged(acks) {
      const done: string[] = [];
      for (const [id, entry] of kept) if (acks.covers(entry.position)) done.push(id);
      if (dropLines(kept, encodePublished, done)) changed();
      return done.length;
    },
    unacknowledged: () => [...kept.values()].map(({ job, position }) => ({ job, position })),
    awaitLookups(list) {
      if (list.length > 0) keepLines(lookups, list, lookupLine, (lookup) => ({ lookup }));
    },
    lookedUp(eventIds) {
      dropLines(lookups, encodeLookedUp, eventIds);
    },
    lookups: () => [...lookups.values()].map((e) => e.lookup),
    owed: () => [...memory.values()].map((e) => e.job),
    owedByApplication,
    get size() {
      return memory.size + pending.size + disk.total;
    },
    get inMemory() {
      return memory.size;
    },
    get onDisk() {
      return disk.total;
    },
    get fileBytes() {
      return journal.bytes;
    },
    close() {
      if (closed) return;
      closed = true;
      if (retryPump) clearTimeout(retryPump);
      unwatchOwed();
      journal.close();
      disk.close();
    },
  };
}
