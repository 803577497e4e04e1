import type { Hash } from 'node:crypto';

const BOM = [0xef, 0xbb, 0xbf];

/**
 * Hashes the body as it passes, less a leading UTF-8 byte-order mark (ignored
 * as the JSON is read, so it makes no other request, as on the interfaces
 * whose body is read whole).
 */
export async function* hashing(source: AsyncIterable<Buffer>, hash: Hash): AsyncGenerator<Buffer> {
  /** Bytes of a leading BOM seen so far, held back from the hash; -1 once the body is past where one could be. */
  let bom = 0;
  for await (const chunk of source) {
    let from = 0;
    while (bom >= 0 && bom < 3 && from < chunk.length) {
      if (chunk[from] !== BOM[bom]) {
        // Not a BOM after all: what was held back is body.
        hash.update(Buffer.from(BOM.slice(0, bom)));
        bom = -1;
        break;
      }
      bom++;
      from++;
    }
    if (bom === 3) bom = -1;
    hash.update(from === 0 ? chunk : chunk.subarray(from));
    yield chunk;
  }
  if (bom > 0) hash.update(Buffer.from(BOM.slice(0, bom)));
}
