import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { explainWithoutFinal, startSmscSimulatorProcess, type SmscSimulatorProcess } from './support/smsc-simulator-process';
import { awaitFinalStatuses, runSmsLoad } from './support/sms-load';

const RECEIPT_DELAY_MS = 400;

describe('delivery receipts owed across a crash', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  });

  async function start(): Promise<{ smsc: SmscSimulatorProcess; dataDir: string; env: Record<string, string> }> {
    const smsc = await startSmscSimulatorProcess({ receiptDelay: `${RECEIPT_DELAY_MS}ms` });
    cleanup.push(async () => fs.rmSync(smsc.dataDir, { recursive: true, force: true }));
    cleanup.push(() => smsc.stop());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-receipts-crash-'));
    cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      HERMOD_SMSC_SIMULATOR: 'false',
      HERMOD_SMPP_HOST: '127.0.0.1',
      HERMOD_SMPP_PORT: String(smsc.port),
      HERMOD_GATEWAYS: '1',
      HERMOD_SMPP_RECONNECT_MAX: '500ms',
    };
    return { smsc, dataDir, env };
  }

  const message = (i: number) => ({ destination: `+6421${String(i).padStart(6, '0')}`, content: `Kia ora, e hoa mā — tēnā koe #${i}` });

  /**
   * Sends `count` messages, kills hermod (kill -9) once `killAfter` are accepted while the carrier still owes
   * receipts, starts it again and expects every accepted message to reach a final status.
   */
  async function killedWhileReceiptsOwed(count: number, killAfter: number, message: (i: number) => { destination: string; content: string }) {
    const { smsc, dataDir, env } = await start();
    let hermod: HermodProcess = await startHermod({ dataDir, env });
    let client: Client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    const load = runSmsLoad(() => client, { count, concurrency: 16, message });
    while (load.accepted.length < killAfter) await new Promise((r) => setTimeout(r, 20));
    const killedAt = Date.now();
    await hermod.kill9();
    // The point of the test: the carrier still owed receipts when hermod died.
    expect(smsc.submits().filter((s) => s.at > killedAt - RECEIPT_DELAY_MS).length).toBeGreaterThan(0);

    // Started again while the senders still try the dead one (refused, they count nothing): the rest of the load takes seconds.
    [hermod] = await Promise.all([startHermod({ dataDir, env }), load.done]);
    client.close();
    cleanup.push(() => hermod.stop());
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    cleanup.push(async () => client.close());
    const report = await awaitFinalStatuses(client, load.accepted, 90_000);
    expect(report.lost).toEqual([]);
    expect(explainWithoutFinal(report, load.accepted, smsc)).toEqual([]);
  }

  it('brings every accepted message to a final status after kill -9 of hermod while receipts were still owed', async () => {
    await killedWhileReceiptsOwed(5000, 400, message);
  }, 300_000);

  it('brings every accepted long message to a final status after kill -9 of hermod while receipts of its parts were still owed', async () => {
    // Three UCS-2 parts each: some parts' receipts are answered before the kill, the rest of the same message's after.
    await killedWhileReceiptsOwed(1500, 300, (i) => ({
      destination: `+6422${String(i).padStart(6, '0')}`,
      content: `Kia ora e te whānau! Hokona ngā hū i tēnei wiki — 50% te utu 👋🏽 #${i} `.repeat(3),
    }));
  }, 300_000);

  it('brings every accepted message to a final status after kill -9 of the SMSC simulator while it owed receipts, once it is back', async () => {
    const { smsc, dataDir, env } = await start();
    const hermod = await startHermod({ dataDir, env });
    cleanup.push(() => hermod.stop());
    const client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    cleanup.push(async () => client.close());
    const load = runSmsLoad(() => client, { count: 600, concurrency: 16, message });
    while (smsc.submits().length < 300) await new Promise((r) => setTimeout(r, 20));
    const killedAt = Date.now();
    await smsc.kill9();
    expect(smsc.submits().filter((s) => s.at > killedAt - RECEIPT_DELAY_MS).length).toBeGreaterThan(0);
    await smsc.restart();
    await load.done;

    const report = await awaitFinalStatuses(client, load.accepted, 90_000);
    expect(report.lost).toEqual([]);
    expect(explainWithoutFinal(report, load.accepted, smsc)).toEqual([]);
  }, 300_000);

  it('brings every accepted message to a final status after kill -9 of `npm start` with its own SMSC simulator inside, once it is started again', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-receipts-embedded-'));
    cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    // The simulator binds port 0 and `hermod start` hands its port to core; after the crash it binds another, and owes its receipts there.
    const env = {
      HERMOD_SMSC_SIMULATOR: 'true',
      HERMOD_SMSC_RECEIPT_DELAY: `${RECEIPT_DELAY_MS}ms`,
      HERMOD_GATEWAYS: '1',
      HERMOD_SMPP_RECONNECT_MAX: '500ms',
    };
    let hermod: HermodProcess = await startHermod({ dataDir, env });
    let client: Client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    const load = runSmsLoad(() => client, { count: 5000, concurrency: 16, message });
    while (load.accepted.length < 400) await new Promise((r) => setTimeout(r, 20));
    await hermod.kill9();
    [hermod] = await Promise.all([startHermod({ dataDir, env }), load.done]);
    client.close();
    cleanup.push(() => hermod.stop());
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    cleanup.push(async () => client.close());
    const report = await awaitFinalStatuses(client, load.accepted, 90_000);
    expect(report.lost.map((m) => `${m.id}: ${m.found}`)).toEqual([]);
    expect(Object.fromEntries(report.withoutFinal)).toEqual({});
  }, 300_000);
});
