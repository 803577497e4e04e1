import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@clickhouse/client';
import { startClickHouseHttpStandin, type ClickHouseHttpStandin } from './support/clickhouse-http-standin';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

// hermod with HERMOD_HISTORY=clickhouse, its history over HTTP to the
// ClickHouse stand-in (chDB behind ClickHouse's HTTP interface).
describe('hermod start with its history on a ClickHouse server', () => {
  let standin: ClickHouseHttpStandin;
  let running: HermodWithSimulator | undefined;
  const env = (url: string) => ({
    HERMOD_HISTORY: 'clickhouse',
    HERMOD_CLICKHOUSE_URL: url.replace('http://', 'http://hermod:p%C4%81ss@') + '/hermod_e2e',
    HERMOD_HISTORY_FLUSH: '100ms',
    // The rows are read from ClickHouse after a clean stop: on a busy machine (other files run beside this one)
    // the last flush must not be cut short by the default 10 s grace.
    HERMOD_SHUTDOWN_GRACE: '60s',
  });

  beforeAll(async () => {
    standin = await startClickHouseHttpStandin({ users: { default: '', hermod: 'pāss' } });
  });
  afterAll(async () => {
    await running?.stop();
    await standin?.close();
  });

  it('stores messages and their statuses in ClickHouse and reads them back after a restart', async () => {
    running = await startHermodWithSimulator('history-clickhouse', env(standin.url));
    const texts = ['Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉'];
    const ids: string[] = [];
    for (const [i, content] of texts.entries()) {
      const sent = await running.client.post('/rest/sms/v2/messages', { destination: `+6421555000${i}`, content });
      expect(sent.status).toBe(202);
      ids.push(sent.json.id as string);
    }
    for (const id of ids) {
      await eventually(async () => ((await running!.client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status === 'received' ? true : undefined), 60_000, 200);
    }
    await running.stop();

    // What reached ClickHouse, as the server has it.
    const admin = createClient({ url: standin.url, database: 'hermod_e2e' });
    const rows = await (
      await admin.query({
        query: 'SELECT content FROM messages WHERE id IN {ids:Array(String)} ORDER BY destination',
        query_params: { ids },
        format: 'JSONEachRow',
      })
    ).json<{ content: string }>();
    await admin.close();
    expect(rows.map((r) => r.content)).toEqual(texts);

    running = await startHermodWithSimulator('history-clickhouse-again', env(standin.url));
    for (const [i, id] of ids.entries()) {
      const got = await running.client.get(`/rest/sms/v2/messages?id=${id}`);
      expect(got.json).toMatchObject({ id, content: texts[i], status: 'received' });
    }
  });
});
