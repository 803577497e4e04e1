import { randomUUID } from 'node:crypto';
import { ClickHouseLogLevel, createClient as createLoudClient, type ClickHouseClient } from '@clickhouse/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClickHouseHttpStandin, type ClickHouseHttpStandin } from './support/clickhouse-http-standin';
import { firstTopLevelSemicolon, parseInsertWithData, unescapeParam } from './support/clickhouse-standin-sql';

// The client logs each refused request; the refusals here are the point.
const createClient: typeof createLoudClient = (config) => createLoudClient({ ...config, log: { level: ClickHouseLogLevel.OFF } });

// The stand-in is only worth its name if @clickhouse/client cannot tell it
// from a server for what hermod does: these drive it through the client.
describe('ClickHouse HTTP stand-in', () => {
  let standin: ClickHouseHttpStandin;
  let client: ClickHouseClient;
  const database = `standin_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

  beforeAll(async () => {
    standin = await startClickHouseHttpStandin({ users: { default: '', hermod: 'pā$$ word' } });
    client = createClient({ url: standin.url });
    await client.command({ query: `CREATE DATABASE ${database}` });
    await client.command({ query: `CREATE TABLE ${database}.notes (id UInt32, text String) ENGINE = MergeTree ORDER BY id` });
  });
  afterAll(async () => {
    await client?.close();
    await standin?.close();
  });

  it('answers a ping', async () => {
    expect(await client.ping()).toEqual({ success: true });
  });

  it('binds any text parameter exactly as a server would read it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), async (a, b) => {
        const rows = await (
          await client.query({ query: 'SELECT {a:String} AS a, {b:Nullable(String)} AS b', query_params: { a, b }, format: 'JSONEachRow' })
        ).json();
        expect(rows).toEqual([{ a, b }]);
      }),
      { numRuns: 40 },
    );
  });

  it('binds any array of texts exactly as a server would read it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 8 }), fc.array(fc.option(fc.string(), { nil: null })), async (a, b) => {
        const rows = await (
          await client.query({ query: 'SELECT {a:Array(String)} AS a, {b:Array(Nullable(String))} AS b', query_params: { a, b }, format: 'JSONEachRow' })
        ).json();
        expect(rows).toEqual([{ a, b }]);
      }),
      { numRuns: 40 },
    );
    const found = await (
      await client.query({
        query: "SELECT x FROM (SELECT arrayJoin(['Māori', 'o''brien', 'a,b']) AS x) WHERE x IN {ids:Array(String)}",
        query_params: { ids: ["o'brien", 'a,b', ']'] },
        format: 'JSONEachRow',
      })
    ).json();
    expect(found).toEqual([{ x: "o'brien" }, { x: 'a,b' }]);
  });

  it('binds numbers and nulls, and parameters sent as a multipart body', async () => {
    const multipart = createClient({ url: standin.url, use_multipart_params: true });
    const query = 'SELECT {n:UInt64} AS n, {i:Int64} AS i, {s:Nullable(String)} AS s, {t:String} AS t';
    const params = { n: 12884901888n, i: -42, s: null, t: 'Привет\t"你好"\\👋🏽' };
    for (const c of [client, multipart]) {
      const [row] = await (await c.query({ query, query_params: params, format: 'JSONEachRow' })).json<Record<string, unknown>>();
      // 64-bit integers come quoted or not, as the engine's version sets output_format_json_quote_64bit_integers.
      expect({ ...row, n: Number(row!.n), i: Number(row!.i) }).toEqual({ n: 12884901888, i: -42, s: null, t: params.t });
    }
    await multipart.close();
  });

  it('inserts rows into the database of the request, and reports them in X-ClickHouse-Summary', async () => {
    const scoped = createClient({ url: standin.url, database });
    const result = await scoped.insert({
      table: 'notes',
      values: [
        { id: 1, text: 'Kia ora, e hoa mā — tēnā koe' },
        { id: 2, text: '你好世界' },
      ],
      format: 'JSONEachRow',
    });
    expect(result.summary?.written_rows).toBe('2');
    const json = await (await scoped.query({ query: 'SELECT id, text FROM notes ORDER BY id', format: 'JSON' })).json<{ data: unknown[] }>();
    expect(json.data).toEqual([
      { id: 1, text: 'Kia ora, e hoa mā — tēnā koe' },
      { id: 2, text: '你好世界' },
    ]);
    await scoped.close();
  });

  it('takes insert data after the statement, in the body or in the query parameter alone', async () => {
    const post = (url: string, body?: string) => fetch(url, { method: 'POST', ...(body === undefined ? {} : { body }) });
    const statement = `INSERT INTO ${database}.notes (id, text) FORMAT JSONEachRow`;
    expect((await post(`${standin.url}/?query=${encodeURIComponent(statement)}`, '{"id":3,"text":"Привет"}\n')).status).toBe(200);
    expect((await post(standin.url, `${statement}\n{"id":4,"text":"你好世界"}\n`)).status).toBe(200);
    expect((await post(`${standin.url}/?query=${encodeURIComponent(`${statement} {"id":5,"text":"👋🏽🎉"}`)}`)).status).toBe(200);
    const rows = await (
      await client.query({ query: `SELECT id, text FROM ${database}.notes WHERE id IN (3, 4, 5) ORDER BY id`, format: 'JSONEachRow' })
    ).json();
    expect(rows).toEqual([
      { id: 3, text: 'Привет' },
      { id: 4, text: '你好世界' },
      { id: 5, text: '👋🏽🎉' },
    ]);
  });

  it('echoes the query id and says which format it answered in', async () => {
    const queryId = randomUUID();
    const rs = await client.query({ query: 'SELECT 1 AS one', format: 'JSONCompactEachRow', query_id: queryId });
    expect(rs.query_id).toBe(queryId);
    expect(rs.response_headers['x-clickhouse-format']).toBe('JSONCompactEachRow');
    expect(await rs.json()).toEqual([[1]]);
  });

  it('reports an unknown table with its ClickHouse code and name', async () => {
    await expect(client.query({ query: 'SELECT * FROM no_such_table', format: 'JSONEachRow' })).rejects.toMatchObject({ code: '60', type: 'UNKNOWN_TABLE' });
    const res = await fetch(`${standin.url}/?query=${encodeURIComponent('SELECT * FROM no_such_table')}`);
    expect(res.headers.get('x-clickhouse-exception-code')).toBe('60');
    expect(await res.text()).toMatch(/^Code: 60\. DB::Exception: .*\(UNKNOWN_TABLE\)/);
  });

  it('refuses a wrong password, a second statement, a missing database and a write over GET', async () => {
    const stranger = createClient({ url: standin.url, username: 'hermod', password: 'nope' });
    await expect(stranger.query({ query: 'SELECT 1' })).rejects.toMatchObject({ code: '516' });
    await stranger.close();
    const hermod = createClient({ url: standin.url, username: 'hermod', password: 'pā$$ word' });
    expect(await (await hermod.query({ query: 'SELECT currentDatabase() AS d', format: 'JSONEachRow' })).json()).toEqual([{ d: 'default' }]);
    await hermod.close();

    await expect(client.command({ query: "SELECT ';'; SELECT 2" })).rejects.toMatchObject({ code: '62' });
    const lost = createClient({ url: standin.url, database: 'no_such_database' });
    await expect(lost.query({ query: 'SELECT 1' })).rejects.toMatchObject({ code: '81' });
    await lost.close();
    const res = await fetch(`${standin.url}/?query=${encodeURIComponent(`CREATE TABLE ${database}.t (x UInt8) ENGINE = Memory`)}`);
    expect(res.status).toBe(500);
    expect(res.headers.get('x-clickhouse-exception-code')).toBe('164');
  });

  it('keeps state within an HTTP session and not outside it', async () => {
    const sessionId = randomUUID();
    await client.command({ query: 'CREATE TEMPORARY TABLE scratch (x String)', session_id: sessionId });
    await client.command({ query: "INSERT INTO scratch VALUES ('👋🏽🎉')", session_id: sessionId });
    expect(await (await client.query({ query: 'SELECT x FROM scratch', format: 'JSONEachRow', session_id: sessionId })).json()).toEqual([{ x: '👋🏽🎉' }]);
    await expect(client.query({ query: 'SELECT x FROM scratch' })).rejects.toMatchObject({ code: '60' });
  });

  it('takes gzip-compressed inserts and compresses answers when asked', async () => {
    const gzip = createClient({ url: standin.url, database, compression: { request: true, response: true } });
    await gzip.insert({ table: 'notes', values: Array.from({ length: 500 }, (_, i) => ({ id: 1000 + i, text: `Привет ${i}` })), format: 'JSONEachRow' });
    const rs = await gzip.query({ query: 'SELECT count() AS n FROM notes WHERE id >= 1000', format: 'JSONEachRow' });
    expect(rs.response_headers['content-encoding']).toBe('gzip');
    expect((await rs.json<{ n: unknown }>()).map((r) => Number(r.n))).toEqual([500]);
    await gzip.close();
  });
});

describe('ClickHouse HTTP stand-in SQL reading', () => {
  it('finds no statement end inside quotes or comments', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const quoted = `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
        expect(firstTopLevelSemicolon(`SELECT ${quoted} /* ; */ -- ;\n`)).toBe(-1);
        expect(firstTopLevelSemicolon(`SELECT ${quoted}; SELECT 2`)).toBe(`SELECT ${quoted}`.length);
      }),
    );
  });

  it('decodes the escapes of a parameter value', () => {
    expect(unescapeParam(String.raw`a\tb\nc\\d\'e\x41\N`)).toBe("a\tb\nc\\d'eAN");
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(unescapeParam(s.replaceAll('\\', '\\\\'))).toBe(s);
      }),
    );
  });

  it('splits an insert into its statement and its data', () => {
    const text = 'INSERT INTO messages (id, content) FORMAT JSONEachRow\n{"id":"1","content":"FORMAT"}\n';
    expect(parseInsertWithData(text)).toMatchObject({
      table: 'messages',
      columns: ['id', 'content'],
      format: 'JSONEachRow',
      plain: true,
      head: 'INSERT INTO messages (id, content) FORMAT JSONEachRow',
    });
    expect(text.slice(parseInsertWithData(text)!.dataOffset)).toBe('{"id":"1","content":"FORMAT"}\n');
    expect(parseInsertWithData("INSERT INTO t VALUES ('x')")).toBeUndefined();
  });
});
