import type { History } from '../ports/history';

/**
 * History as its engine adapters (chDB, ClickHouse) and the journal provide
 * it: besides the ports, an insert of rows already encoded as JSONEachRow
 * lines (rows.ts messageRow / eventRow). The journal keeps its rows in that
 * form, so its flush and its replay cost no second encoding. Not a port:
 * nothing outside the history adapters writes encoded rows.
 */
export interface EncodedHistory extends History {
  insertEncoded(messageRows: string, eventRows: string): Promise<void>;
}
