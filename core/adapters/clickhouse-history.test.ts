import { randomUUID } from 'node:crypto';
import { createClient } from '@clickhouse/client';
import { describe, it } from 'vitest';
import { describeHistoryContract } from './history-contract';
import { createClickHouseHistory } from './clickhouse-history';

const url = process.env.CLICKHOUSE_URL;

if (url) {
  describeHistoryContract('ClickHouse server (@clickhouse/client)', () => {
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
} else {
  describe('History contract: ClickHouse server (@clickhouse/client)', () => {
    it.skip('runs when CLICKHOUSE_URL is set (e.g. CLICKHOUSE_URL=http://127.0.0.1:8123); no server is configured here', () => undefined);
  });
}
