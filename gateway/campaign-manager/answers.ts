import { HermodError } from '../../lib/errors';
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
export const listsAsJson = (chunks: AsyncIterable<ListsChunk>): AsyncGenerator<string> => listsJson(chunks, false);

/**
 * GET lists/{list_id}: the list alone, `{id, name, created, members: [...]}`,
 * or not_found before any text when core sends no list. Only the list of that
 * id is taken (a core from before list_id sends every list).
 */
export const listAsJson = (chunks: AsyncIterable<ListsChunk>, id: number): AsyncGenerator<string> => listsJson(chunks, id);

async function* listsJson(chunks: AsyncIterable<ListsChunk>, only: number | false): AsyncGenerator<string> {
  const one = only !== false;
  let lists = 0;
  let membersInList = 0;
  let skipping = false;
  let text = one ? '' : '[';
  for await (const chunk of chunks) {
    const part = chunk.part;
    if (!part) continue;
    if (part.$case === 'list') {
      const l = part.value;
      skipping = one && l.id !== only;
      if (skipping) continue;
      text += `${lists > 0 ? ']},' : ''}{"id":${l.id},"name":${JSON.stringify(l.name)},"created":${JSON.stringify((l.created ?? new Date(0)).toISOString())},"members":[`;
      lists++;
      membersInList = 0;
    } else {
      if (skipping) continue;
      for (const m of part.value.members) text += (membersInList++ > 0 ? ',' : '') + memberJson(m);
    }
    yield text;
    text = '';
  }
  if (one && lists === 0) throw new HermodError('not_found', 'no such list');
  yield `${text}${lists > 0 ? ']}' : ''}${one ? '' : ']'}`;
}

/**
 * GET report: the rows' JSON as core sends it, in the array's brackets. The
 * opening bracket waits for core's first (empty) chunk, so a campaign that
 * does not exist still gets its error answer.
 */
export async function* reportAsJson(chunks: AsyncIterable<ReportChunk>): AsyncGenerator<string | Uint8Array> {
  let open = '[';
  for await (const chunk of chunks) {
    if (open) {
      yield open;
      open = '';
    }
    if (chunk.jsonRows.length > 0) yield chunk.jsonRows;
  }
  yield `${open}]`;
}
