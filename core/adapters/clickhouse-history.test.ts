import { randomUUID } from 'node:crypto';
import { createClient } from '@clickhouse/client';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { History } from '../ports/history';
import { startClickHouseHttpStandin, type ClickHouseHttpStandin } from '../../test/support/clickhouse-http-standin';
import { describeHistoryContract, event, message } from './history-contract';
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

describeHistoryContract(
  process.env.CLICKHOUSE_URL ? 'ClickHouse server (@clickhouse/client)' : 'ClickHouse over HTTP, chDB behind a stand-in for the server (@clickhouse/client)',
  async () => {
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
      exec: async (statements) => {
        const admin = createClient({ url, database });
        try {
          for (const query of statements) await admin.command({ query });
        } finally {
          await admin.close();
        }
      },
    };
  },
);

describe('ClickHouse history over HTTP', () => {
  const opened: History[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((h) => h.close()));
  });
  const open = async (options: Parameters<typeof createClickHouseHistory>[0]): Promise<History> => {
    const history = await createClickHouseHistory(options);
    opened.push(history);
    return history;
  };
  const greeting = (content: string) => message({ content, destination: '+64211234567' });

  it('creates the database named in the URL when it is missing, and keeps its rows there', async () => {
    const url = await serverUrl();
    const database = `hermod_path_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const history = await open({ url: `${url}/${database}` });
    const m = greeting('Kia ora, e hoa mā — tēnā koe');
    await history.insertMessages([m], [event(m, 'accepted', m.acceptedAt)]);
    expect(await history.getMessage(m.applicationId, m.id)).toMatchObject({ content: m.content, status: 'accepted' });

    const admin = createClient({ url, database });
    const rows = await (await admin.query({ query: 'SELECT content FROM messages', format: 'JSONEachRow' })).json<{ content: string }>();
    await admin.command({ query: `DROP DATABASE ${database}` });
    await admin.close();
    expect(rows).toEqual([{ content: m.content }]);
  });

  it('stores and reads rows through a client that compresses requests and responses', async () => {
    const url = await serverUrl();
    const database = `hermod_gzip_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const history = await open({ url: `${url}?compression_request=1&compression_response=1`, database });
    const batch = ['Привет', '你好世界', '👋🏽🎉', 'Kia ora, e hoa mā — tēnā koe'].map(greeting);
    await history.insertMessages(
      batch,
      batch.map((m) => event(m, 'accepted', m.acceptedAt)),
    );
    for (const m of batch) expect((await history.getMessage(m.applicationId, m.id))?.content).toBe(m.content);
    const admin = createClient({ url });
    await admin.command({ query: `DROP DATABASE ${database}` });
    await admin.close();
  });
});
