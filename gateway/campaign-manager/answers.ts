import type { ListsChunk, Member, ReportChunk } from '../../proto/gen/hermod/v1/campaigns';

/**
 * The JSON text of the streamed answers, fragment by fragment (one fragment
 * per gRPC chunk of up to a few thousand rows).
 */
const PARAMS = ['param1', 'param2', 'param3', 'param4', 'param5', 'param6'] as const;

function memberJson(m: Member): string {
  let text = `{"destination":${JSON.stringify(m.destination)}`;
  m.params.forEach((p, i) => {
    if (p) text += `,"${PARAMS[i]}":${JSON.stringify(p)}`;
  });
  return text + '}';
}

/** GET lists: `[{id, name, created, members: [...]}, ...]`. */
export async function* listsAsJson(chunks: AsyncIterable<ListsChunk>): AsyncGenerator<string> {
  let lists = 0;
  let membersInList = 0;
  let text = '[';
  for await (const chunk of chunks) {
    const part = chunk.part;
    if (!part) continue;
    if (part.$case === 'list') {
      const l = part.value;
      text += `${lists > 0 ? ']},' : ''}{"id":${l.id},"name":${JSON.stringify(l.name)},"created":${JSON.stringify((l.created ?? new Date(0)).toISOString())},"members":[`;
      lists++;
      membersInList = 0;
    } else {
      for (const m of part.value.members) text += (membersInList++ > 0 ? ',' : '') + memberJson(m);
    }
    yield text;
    text = '';
  }
  yield `${text}${lists > 0 ? ']}' : ''}]`;
}

/**
 * Times in RFC 3339 at a fixed UTC offset, e.g. 2026-11-24T09:00:00.000+13:00.
 * Each formatter keeps the text of the last second it wrote: report rows come
 * in bursts from the same second, and a report keeps one formatter per column
 * so the sent and status times do not evict each other's.
 */
export function createDateFormatter(): (ms: number, offsetMinutes: number) => string {
  let cachedSecond = Number.NaN;
  let cachedOffset = Number.NaN;
  let cachedPrefix = '';
  let cachedZone = '';
  return (ms, offsetMinutes) => {
    const local = ms + offsetMinutes * 60_000;
    const second = Math.floor(local / 1000);
    if (second !== cachedSecond || offsetMinutes !== cachedOffset) {
      cachedSecond = second;
      cachedOffset = offsetMinutes;
      cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19);
      cachedZone = offsetName(offsetMinutes);
    }
    const milli = local - second * 1000;
    return `${cachedPrefix}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}${cachedZone}`;
  };
}

export const formatAtOffset = createDateFormatter();

export function offsetName(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** JSON text of a value that repeats from row to row (the list name, the status), kept while it repeats. */
function repeatedJson(): (value: string) => string {
  let last: string | undefined;
  let json = '';
  return (value) => {
    if (value !== last) {
      last = value;
      json = JSON.stringify(value);
    }
    return json;
  };
}

/** A mobile number is digits with an optional +: its JSON is itself in quotes; anything else goes through JSON.stringify. */
const PLAIN = /^\+?[0-9]*$/;
const jsonString = (value: string): string => (PLAIN.test(value) ? `"${value}"` : JSON.stringify(value));

/** GET report: one row per campaign message, dates in the campaign's schedule offset. */
export async function* reportAsJson(chunks: AsyncIterable<ReportChunk>): AsyncGenerator<string> {
  let rows = 0;
  let text = '[';
  const sentDate = createDateFormatter();
  const statusDate = createDateFormatter();
  const listName = repeatedJson();
  const status = repeatedJson();
  for await (const chunk of chunks) {
    const offset = chunk.utcOffsetMinutes;
    const zone = JSON.stringify(offsetName(offset));
    for (const r of chunk.rows) {
      text +=
        `${rows++ > 0 ? ',' : ''}{"list_name":${listName(r.listName)},"message_id":${r.messageId},"mobile":${jsonString(r.mobile)},` +
        `"sent_date":"${r.sentAt > 0 ? sentDate(r.sentAt, offset) : ''}","status":${status(r.status)},` +
        `"status_date":"${statusDate(r.statusAt, offset)}","timezone":${zone}}`;
    }
    yield text;
    text = '';
  }
  yield text + ']';
}
