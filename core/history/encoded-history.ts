import type { History } from '../ports/history';

/**
 * History as its engine adapters (chDB, ClickHouse) and the journal provide
 * it: besides the ports, an insert of rows already encoded as JSONEachRow
 * lines (rows.ts messageRow / eventRow), as text or as its UTF-8 bytes. The
 * journal keeps its rows in that form, so its flush and its replay cost no
 * second encoding. Not a port: nothing outside the history adapters writes
 * encoded rows.
 */
export interface EncodedHistory extends History {
  insertEncoded(messageRows: EncodedRows, eventRows: EncodedRows): Promise<void>;
}

/** JSONEachRow lines, as text or as UTF-8 bytes. */
export type EncodedRows = string | Buffer;
