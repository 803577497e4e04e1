import type { StatusChange } from '../messages/status-recorder';
import type { BusPosition } from '../ports/bus';
import type { CallbackJob } from './callback-job';

/**
 * The outbox journal: one line per change, appended in the order they happen.
 * Each line is one whole change, so a line torn by a crash is a change that
 * never happened.
 *
 * - `J<job>`: the job is owed in memory (again, when it is a retry's new state);
 * - `S<event id>`: the job is settled (delivered, refused, given up); compaction
 *   writes the latest settled ids again, so a repeat of one is known after it;
 * - `A<{a,s,o,j}>`: jobs `j` of application `a` were read into memory from its
 *   queue on disk, segment `s` up to byte `o`;
 * - `E<{a,s,i}>`: the jobs with event ids `i` left memory for segment `s`,
 *   the new head of application `a`'s queue on disk;
 * - `Q<{a,l,f}>`: application `a`'s queue on disk: segments below `l` are not
 *   part of it, and segment `s` is read up to byte `f[s]` (written by compaction);
 * - `P<job>`: the job is kept only until it is published on a bus that keeps records;
 * - `p<event id>`: it was published, or, kept since, a consumer has it: it is no longer kept;
 * - `p<event id> <epoch> <partition> <offset>`: it was published there, on a bus that can lose what it
 *   took (Redis), and is kept until the consumers' group has acknowledged it (written after its `P` line);
 * - `L<{e,c}>`: status change `c` of a message not in memory waits for its
 *   message to be looked up in history; its job, if it makes one, gets event id `e`;
 * - `l<event id>`: that lookup ended (its job is owed or held, or there is none).
 *
 * JSON never holds a raw newline byte, so 0x0A ends every line whatever the
 * text. Replay works on bytes: lines are cut at 0x0A before any decoding, and
 * the bytes after the last 0x0A (a write torn by a crash, possibly in the
 * middle of a multi-byte character) were never acknowledged and are dropped.
 */
const NEWLINE = 0x0a;

export const owedLine = (job: CallbackJob): string => `J${JSON.stringify(job)}\n`;
export const pendingLine = (job: CallbackJob): string => `P${JSON.stringify(job)}\n`;
export const encodeOwed = (jobs: readonly CallbackJob[]): Buffer => Buffer.from(jobs.map(owedLine).join(''), 'utf8');
export const encodeSettled = (eventIds: readonly string[]): Buffer => Buffer.from(eventIds.map((id) => `S${id}\n`).join(''), 'utf8');
export const encodePending = (jobs: readonly CallbackJob[]): Buffer => Buffer.from(jobs.map(pendingLine).join(''), 'utf8');
/** A status change waiting for its message's lookup, and the event id its job is to have. */
export interface OwedLookup {
  eventId: string;
  change: StatusChange;
}

export const lookupLine = (l: OwedLookup): string => `L${JSON.stringify({ e: l.eventId, c: l.change })}\n`;
export const encodeLookups = (lookups: readonly OwedLookup[]): Buffer => Buffer.from(lookups.map(lookupLine).join(''), 'utf8');
export const encodeLookedUp = (eventIds: readonly string[]): Buffer => Buffer.from(eventIds.map((id) => `l${id}\n`).join(''), 'utf8');
export const encodePublished = (eventIds: readonly string[]): Buffer => Buffer.from(eventIds.map((id) => `p${id}\n`).join(''), 'utf8');
/** A job published on a bus that can lose records, and where: kept until acknowledged. */
export interface KeptJob {
  job: CallbackJob;
  position: BusPosition;
}
export const keptLine = (eventId: string, p: BusPosition): string => `p${eventId} ${p.epoch} ${p.partition} ${p.offset}\n`;
export const encodeKept = (kept: readonly KeptJob[]): Buffer =>
  Buffer.from(kept.map((k) => pendingLine(k.job) + keptLine(k.job.eventId, k.position)).join(''), 'utf8');
export const encodeAdmitted = (applicationId: string, segment: number, offset: number, jobs: readonly CallbackJob[]): Buffer =>
  Buffer.from(`A${JSON.stringify({ a: applicationId, s: segment, o: offset, j: jobs })}\n`, 'utf8');
export const encodeEvicted = (applicationId: string, segment: number, eventIds: readonly string[]): Buffer =>
  Buffer.from(`E${JSON.stringify({ a: applicationId, s: segment, i: eventIds })}\n`, 'utf8');
export const encodeQueueState = (applicationId: string, state: QueueState): Buffer =>
  Buffer.from(`Q${JSON.stringify({ a: applicationId, l: state.low, f: Object.fromEntries(state.from) })}\n`, 'utf8');

/** Where an application's queue on disk stands: its lowest segment, and how far each partly read segment was read. */
export interface QueueState {
  low: number;
  from: Map<number, number>;
}

export interface Replayed {
  /** Jobs owed in memory by event id, in the order each came into memory. */
  owed: Map<string, CallbackJob>;
  /** Bytes of the line that last wrote each owed job (its share of the line, for several); of each lookup under `L<event id>`. */
  bytes: Map<string, number>;
  /** Bytes up to the end of the last whole line. */
  whole: number;
  /** Jobs kept until published, by event id. */
  pending: Map<string, CallbackJob>;
  /** Jobs published on a bus that can lose records, kept until acknowledged, by event id. */
  kept: Map<string, KeptJob>;
  /** Status changes waiting for their message's lookup, by the event id their job is to have. */
  lookups: Map<string, OwedLookup>;
  /** Queues on disk, by application. */
  queues: Map<string, QueueState>;
  /** Event ids settled, oldest first (`S` lines, those compaction kept included): a job owed again under one is a repeat. */
  settled: string[];
  /** Complete lines that could not be read (damaged), skipped. */
  damaged: number;
}

const emptyState = (): QueueState => ({ low: 0, from: new Map() });

export function replayOutbox(bytes: Buffer): Replayed {
  const owed = new Map<string, CallbackJob>();
  const sizes = new Map<string, number>();
  const pending = new Map<string, CallbackJob>();
  const kept = new Map<string, KeptJob>();
  const lookups = new Map<string, OwedLookup>();
  const queues = new Map<string, QueueState>();
  const stateOf = (app: string): QueueState => {
    let s = queues.get(app);
    if (!s) {
      s = emptyState();
      queues.set(app, s);
    }
    return s;
  };
  const settled: string[] = [];
  let damaged = 0;
  let start = 0;
  for (let end = bytes.indexOf(NEWLINE, start); end !== -1; start = end + 1, end = bytes.indexOf(NEWLINE, start)) {
    if (end === start) continue;
    const kind = bytes[start];
    const text = bytes.toString('utf8', start + 1, end);
    if (kind === 0x53 /* S */) {
      owed.delete(text);
      settled.push(text);
      continue;
    }
    if (kind === 0x70 /* p */) {
      const [id = '', epoch, partition, offset] = text.split(' ');
      const job = pending.get(id);
      pending.delete(id);
      kept.delete(id);
      if (job && epoch !== undefined && offset !== undefined && Number.isInteger(Number(partition))) {
        kept.set(id, { job, position: { epoch, partition: Number(partition), offset } });
        sizes.set(id, (sizes.get(id) ?? 0) + end + 1 - start);
      }
      continue;
    }
    if (kind === 0x6c /* l */) {
      lookups.delete(text);
      sizes.delete(`L${text}`);
      continue;
    }
    try {
      const v = JSON.parse(text);
      if ((kind === 0x4a /* J */ || kind === 0x50) /* P */ && isJob(v)) {
        (kind === 0x4a ? owed : pending).set(v.eventId, v);
        // Held again (published again after its bus lost it): kept no more until it is handed over again.
        if (kind === 0x50) kept.delete(v.eventId);
        sizes.set(v.eventId, end + 1 - start);
        continue;
      }
      if (kind === 0x41 /* A */ && typeof v.a === 'string' && Array.isArray(v.j) && v.j.every(isJob)) {
        stateOf(v.a).from.set(v.s, v.o);
        for (const job of v.j as CallbackJob[]) {
          owed.set(job.eventId, job);
          sizes.set(job.eventId, Math.ceil((end + 1 - start) / v.j.length));
        }
        continue;
      }
      if (kind === 0x4c /* L */ && typeof v.e === 'string' && isChange(v.c)) {
        lookups.set(v.e, { eventId: v.e, change: v.c });
        sizes.set(`L${v.e}`, end + 1 - start);
        continue;
      }
      if (kind === 0x45 /* E */ && typeof v.a === 'string' && Array.isArray(v.i)) {
        stateOf(v.a).low = v.s;
        for (const id of v.i as string[]) owed.delete(id);
        continue;
      }
      if (kind === 0x51 /* Q */ && typeof v.a === 'string') {
        queues.set(v.a, { low: v.l, from: new Map(Object.entries(v.f as Record<string, number>).map(([s, o]) => [Number(s), o])) });
        continue;
      }
    } catch {
      // counted below
    }
    damaged++;
  }
  for (const id of sizes.keys()) if (!owed.has(id) && !pending.has(id) && !kept.has(id) && !(id.startsWith('L') && lookups.has(id.slice(1)))) sizes.delete(id);
  return { owed, bytes: sizes, whole: start, pending, kept, lookups, queues, settled, damaged };
}

function isJob(v: unknown): v is CallbackJob {
  const j = v as CallbackJob | null;
  return typeof j === 'object' && j !== null && typeof j.eventId === 'string' && typeof j.messageId === 'string';
}

function isChange(v: unknown): v is StatusChange {
  const c = v as StatusChange | null;
  return typeof c === 'object' && c !== null && typeof c.messageId === 'string' && typeof c.status === 'string' && typeof c.at === 'number';
}
