import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planSms } from '../core/domain/sms-segments';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { explainWithoutFinal, startSmscSimulatorProcess } from './support/smsc-simulator-process';
import { awaitFinalStatuses, runSmsLoad } from './support/sms-load';

/** What users write: te reo Māori, Cyrillic, CJK, emoji, and all of them at once; some long enough to need several parts. */
const TEXTS = [
  'Kia ora, e hoa mā — tēnā koe',
  'Привет! Ваш код: 4711',
  '你好世界，明天见',
  '👋🏽🎉 see you soon',
  'Kia ora 👋🏽 Привет 你好世界 — tēnā koutou katoa',
  'Tēnā koe e hoa mā, kua tae mai tō pūrongo. '.repeat(4),
];

describe('fault run', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
  });

  it('brings every message answered 202 to a final status after kill -9 of every hermod process mid-load, with the SMSC in its own process', async () => {
    const smsc = await startSmscSimulatorProcess({ receiptDelay: '300ms' });
    cleanup.push(async () => fs.rmSync(smsc.dataDir, { recursive: true, force: true }));
    cleanup.push(() => smsc.stop());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-fault-run-'));
    cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = { HERMOD_SMSC_SIMULATOR: 'false', HERMOD_SMPP_HOST: '127.0.0.1', HERMOD_SMPP_PORT: String(smsc.port), HERMOD_SMPP_RECONNECT_MAX: '500ms' };

    let hermod: HermodProcess = await startHermod({ dataDir, env });
    let client: Client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    const load = runSmsLoad(() => client, {
      count: 4000,
      concurrency: 24,
      message: (i) => ({ destination: `+6422${String(i).padStart(6, '0')}`, content: `${TEXTS[i % TEXTS.length]} #${i}` }),
    });
    while (load.accepted.length < 600) await new Promise((r) => setTimeout(r, 20));
    await hermod.kill9();
    await load.done;
    client.close();

    hermod = await startHermod({ dataDir, env });
    cleanup.push(() => hermod.stop());
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    cleanup.push(async () => client.close());
    const report = await awaitFinalStatuses(client, load.accepted, 120_000);

    // A duplicate at the SMSC: a message whose parts were accepted there more often than it has parts.
    const submitsTo = new Map<string, number>();
    for (const s of smsc.submits()) submitsTo.set(s.destination, (submitsTo.get(s.destination) ?? 0) + 1);
    const duplicates = load.accepted.filter((m) => (submitsTo.get(m.destination) ?? 0) > planSms(m.content).count).length;
    const accepted = load.accepted.length;
    const lost = report.lost.length;
    const withoutFinal = report.withoutFinal.size;
    console.log(`fault run: accepted ${accepted}, lost ${lost}, without final status ${withoutFinal}, duplicates at SMSC ${duplicates}`);

    expect(accepted).toBeGreaterThanOrEqual(600);
    expect(report.lost.map((m) => `${m.id} ${JSON.stringify(m.content)}: ${m.found}`)).toEqual([]);
    expect(explainWithoutFinal(report, load.accepted, smsc)).toEqual([]);
    expect(withoutFinal).toBe(0);
  }, 300_000);
});
