import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

const MESSAGES = 1000;

describe('callbacks for receipts that come after their message left memory', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
  });

  it(`posts the received status of each of ${MESSAGES} messages whose receipts all came late, after its submitted status`, async () => {
    const statuses = new Map<string, string[]>();
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        const json = JSON.parse(body) as { id: string; status: string };
        statuses.set(json.id, [...(statuses.get(json.id) ?? []), json.status]);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => receiver.close(r)));
    const port = (receiver.address() as { port: number }).port;

    // Messages leave memory 1 s after they are accepted; the carrier's receipts come 4 s after the submit.
    const running: HermodWithSimulator = await startHermodWithSimulator(
      'late-receipts',
      { HERMOD_CALLBACK_ALLOW_PRIVATE: 'true', HERMOD_RECENT_MESSAGES_MAX_AGE: '1s' },
      { receiptDelayMs: 4000 },
    );
    cleanup.push(() => running.stop());
    const set = await running.hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://localhost:${port}/status`]);
    expect(set.code).toBe(0);

    const ids: string[] = [];
    for (let i = 0; i < MESSAGES; i += 50) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          running.client.post('/rest/sms/v2/messages', { destination: `+64220${String(i + j).padStart(5, '0')}`, content: `Tēnā koe ${i + j} — 你好 🌿` }),
        ),
      );
      for (const r of replies) {
        expect(r.status).toBe(202);
        ids.push(r.json.id);
      }
    }

    const sentAt = Date.now();
    await eventually(() => ids.every((id) => statuses.get(id)?.includes('received')), 60_000, 100);
    console.log(`all ${MESSAGES} received callbacks ${Date.now() - sentAt} ms after the last 202`);
    for (const id of ids) {
      const told = statuses.get(id)!;
      expect(told).toContain('submitted');
      expect(told.indexOf('received')).toBeGreaterThan(told.indexOf('submitted'));
    }
  });
});
