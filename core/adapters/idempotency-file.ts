import { openJsonLinesFile, type JsonLinesFile } from '../../lib/json-lines-file';
import type { IdempotencyRecord } from '../ports/state';

export interface KeptAnswer {
  key: string;
  record: Required<IdempotencyRecord>;
  /** Epoch ms after which the key is free again. */
  expires: number;
}

/** The answers of Idempotency-Keys of an in-process hot state, on disk, so a client's retry after a restart still gets the first answer. */
export type IdempotencyFile = JsonLinesFile<KeptAnswer>;

/** Opens `file`, returning the answers it holds that have not expired at `now`, oldest first (json-lines-file.ts). */
export function openIdempotencyFile(file: string, now: number, fsync: boolean): { file: IdempotencyFile; kept: KeptAnswer[] } {
  return openJsonLinesFile<KeptAnswer>(
    file,
    fsync,
    (value) => {
      const v = value as { k?: unknown; f?: unknown; r?: unknown; e?: unknown } | null;
      if (!v || typeof v.k !== 'string' || typeof v.f !== 'string' || typeof v.r !== 'string' || typeof v.e !== 'number' || v.e <= now) return undefined;
      return { key: v.k, record: { fingerprint: v.f, response: v.r }, expires: v.e };
    },
    (a) => ({ k: a.key, f: a.record.fingerprint, r: a.record.response, e: a.expires }),
  );
}
