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

/** A time in RFC 3339 at a fixed UTC offset, e.g. 2026-11-24T09:00:00.000+13:00. */
export function formatAtOffset(ms: number, offsetMinutes: number): string {
  // Report rows come in bursts from the same second: reuse its date and time text.
  const local = ms + offsetMinutes * 60_000;
  const second = Math.floor(local / 1000);
  if (second !== cachedSecond || offsetMinutes !== cachedOffset) {
    cachedSecond = second;
    cachedOffset = offsetMinutes;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19);
    cachedZone = offsetName(offsetMinutes);
  }
  return `${cachedPrefix}.${String(local - second * 1000).padStart(3, '0')}${cachedZone}`;
}

let cachedSecond = Number.NaN;
let cachedOffset = Number.NaN;
let cachedPrefix = '';
let cachedZone = '';

export function offsetName(offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** GET report: one row per campaign message, dates in the campaign's schedule offset. */
export async function* reportAsJson(chunks: AsyncIterable<ReportChunk>): AsyncGenerator<string> {
  let rows = 0;
  let text = '[';
  for await (const chunk of chunks) {
    const offset = chunk.utcOffsetMinutes;
    const zone = JSON.stringify(offsetName(offset));
    for (const r of chunk.rows) {
      text +=
        (rows++ > 0 ? ',' : '') +
        `{"list_name":${JSON.stringify(r.listName)},"message_id":${r.messageId},"mobile":${JSON.stringify(r.mobile)},` +
        `"sent_date":${JSON.stringify(r.sentAt > 0 ? formatAtOffset(r.sentAt, offset) : '')},"status":${JSON.stringify(r.status)},` +
        `"status_date":${JSON.stringify(formatAtOffset(r.statusAt, offset))},"timezone":${zone}}`;
    }
    yield text;
    text = '';
  }
  yield text + ']';
}
