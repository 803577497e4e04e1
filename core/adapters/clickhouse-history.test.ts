import { randomUUID } from 'node:crypto';
import { createClient } from '@clickhouse/client';
import { afterAll } from 'vitest';
import { startClickHouseHttpStandin, type ClickHouseHttpStandin } from '../../test/support/clickhouse-http-standin';
import { describeHistoryContract } from './history-contract';
import { createClickHouseHistory } from './clickhouse-history';

// A real server when CLICKHOUSE_URL names one; otherwise the HTTP stand-in,
// which runs the same engine (chDB) behind ClickHouse's HTTP interface, so the
// adapter is exercised through @clickhouse/client over real HTTP either way.
let standin: Promise<ClickHouseHttpStandin> | undefined;
const serverUrl = async (): Promise<string> => {
  if (process.env.CLICKHOUSE_URL) return process.env.CLICKHOUSE_URL;
  standin ??= startClickHouseHttpStandin();
  return (await standin).url;
};
afterAll(async () => (await standin)?.close());

describeHistoryContract(process.env.CLICKHOUSE_URL ? 'ClickHouse server (@clickhouse/client)' : 'ClickHouse over HTTP, chDB behind a stand-in for the server (@clickhouse/client)', async () => {
  const url = await serverUrl();
  // Each test gets a database of its own on the shared server.
  const database = `hermod_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  return {
    open: () => createClickHouseHistory({ url, database }),
    dispose: async () => {
      const admin = createClient({ url });
      await admin.command({ query: `DROP DATABASE IF EXISTS ${database}` });
      await admin.close();
    },
  };
});
