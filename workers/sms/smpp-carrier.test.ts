import { describe, expect, it } from 'vitest';
import { smppBindUp } from '../../lib/metrics';
import { quietLog, smppTestKit } from '../simulators/smpp-test-kit';
import { carrierConfig } from './carrier-config-test-kit';
import { createSmppCarrier } from './smpp-carrier';
import { isHeldBack, takenParts } from '../carrier';
import { CommandStatus } from '../carriers/smpp/command-status';
import type { Logger } from '../../lib/log';
import { keptWarnings } from '../../lib/kept-warnings-test-kit';

/** A logger that keeps each line as `level message`. */
function recordingLog(lines: string[]): Logger {
  const log: Logger = {
    debug: (m) => void lines.push(`debug ${m}`),
    info: (m) => void lines.push(`info ${m}`),
    warn: (m) => void lines.push(`warn ${m}`),
    error: (m) => void lines.push(`error ${m}`),
    child: () => log,
  };
  return log;
}

const kit = smppTestKit();

const bindUp = async (bind: string): Promise<number | undefined> => (await smppBindUp.get()).values.find((v) => v.labels.bind === bind)?.value;

describe('SMPP carrier metrics', () => {
  it('shows its bind up while bound, down once the SMSC goes away, and drops it when closed on purpose', async () => {
    const sim = await kit.simulator();
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    const bind = `hermod@localhost:${sim.port}`;
    await carrier.ready();
    expect(await bindUp(bind)).toBe(1);

    await sim.stop();
    for (let i = 0; i < 300 && (await bindUp(bind)) !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await bindUp(bind)).toBe(0);

    await carrier.close();
    expect(await bindUp(bind)).toBeUndefined();
  });

  it('warns when the SMSC goes away, not when hermod closes its bind on purpose (a worker stopping)', async () => {
    const sim = await kit.simulator();
    const lines: string[] = [];
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), recordingLog(lines));
    kit.defer(() => carrier.close());
    await carrier.ready();
    await carrier.close();
    expect(lines.filter((l) => l.startsWith('warn') || l.startsWith('error'))).toEqual([]);
    expect(lines).toContain('info SMPP unbound');
    expect(carrier.snapshots().map((s) => s.lastError)).toEqual(['']);

    const other = await kit.simulator();
    const gone = createSmppCarrier(carrierConfig('spark', other.port), recordingLog(lines));
    kit.defer(() => gone.close());
    await gone.ready();
    await other.stop();
    for (let i = 0; i < 300 && !lines.includes('warn SMPP disconnected'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(lines).toContain('warn SMPP disconnected');
  });

  it('shows no bind error for a message withdrawn unsent on purpose (a paused campaign, the submit limit), as that is normal flow', async () => {
    const sim = await kit.simulator();
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    await carrier.ready();
    const job = { id: 'm-1', destination: '+6421000001', source: 'SHOP', content: 'Kia ora — 你好 👋' } as never;
    const err = await carrier.send(job, undefined, { holdBack: () => true }).catch((e: unknown) => e);
    expect(isHeldBack(err)).toBe(true);
    expect(carrier.snapshots().map((s) => s.lastError)).toEqual(['']);
  });

  it('names every part the SMSC took of a long message it then refused for good, also a part taken in the same round as the refusal (trial)', async () => {
    // First try: part 1 taken, parts 2 and 3 throttled; tried again: part 2 refused for good, part 3 taken.
    const tries = new Map<number, number>();
    const sim = await kit.simulator({
      statusFor: (s) => {
        const seq = s.concat?.seq ?? 1;
        const n = (tries.get(seq) ?? 0) + 1;
        tries.set(seq, n);
        if (seq === 1) return undefined;
        if (n === 1) return CommandStatus.ESME_RTHROTTLED;
        return seq === 2 ? CommandStatus.ESME_RSUBMITFAIL : undefined;
      },
    });
    const taken: string[] = [];
    sim.on('submit', (s) => s.status === 0 && taken.push(s.carrierMessageId!));
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    await carrier.ready();
    const job = { id: 'm-2', destination: '+6421000002', source: 'SHOP', content: 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好 '.repeat(5) } as never;
    const err = await carrier.send(job).catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: false, message: expect.stringMatching(/part 2 of 3 refused/) });
    expect(taken).toHaveLength(2);
    expect([...takenParts(err)].sort()).toEqual(taken.map((id) => `spark:${id}`).sort());
  });

  it('joins a long reply whose parts the SMSC delivered on different binds into one message', async () => {
    const sim = await kit.simulator();
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port, { binds: 3 }), quietLog);
    kit.defer(() => carrier.close());
    const replies: { text: string; source: string }[] = [];
    carrier.onInbound((m) => void replies.push({ text: m.text, source: m.source }));
    await carrier.ready();
    for (let i = 0; i < 300 && sim.boundCount < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(sim.boundCount).toBe(3);
    const long = 'Tēnā koe e hoa, he pātai tāku mō te hui āpōpō 👩🏽‍💻 你好世界 '.repeat(4);
    expect(await sim.originate({ source: '+64219876543', destination: '4000', text: long, spreadParts: true })).toBeGreaterThan(2);
    for (let i = 0; i < 300 && replies.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    expect(replies).toEqual([{ text: long, source: '+64219876543' }]);
  });

  it('passes on what came of a long reply when its last bind closes, not while another bind may still bring the rest', async () => {
    const sim = await kit.simulator();
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port, { binds: 2 }), quietLog);
    const replies: string[] = [];
    carrier.onInbound((m) => void replies.push(m.text));
    await carrier.ready();
    for (let i = 0; i < 300 && sim.boundCount < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await sim.originate({ source: '+64219876543', destination: '4000', text: 'Kia ora e hoa mā 😀 '.repeat(12), onlyParts: [1], spreadParts: true });
    await new Promise((r) => setTimeout(r, 100));
    expect(replies).toEqual([]);
    await carrier.close();
    for (let i = 0; i < 200 && replies.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatch(/^Kia ora e hoa mā 😀 .*…$/);
  });

  it('takes a slow SMSC’s late answer to a long message’s parts instead of sending them again, and tells of the slowness (trial)', async () => {
    const sim = await kit.simulator({ submitRespDelayMs: 600 });
    const lines: string[] = [];
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port, { submitTimeoutMs: 100, answerWaitMs: 5_000 }), recordingLog(lines));
    await carrier.ready();
    const long = 'Kia ora e hoa mā — he karere roa tēnei 🐢 你好 '.repeat(5);
    const { carrierIds } = await carrier.send({ id: 'm-slow', destination: '+6421000077', source: 'SHOP', content: long } as never);
    expect(carrierIds.length).toBeGreaterThan(1);
    expect(sim.submitCount).toBe(carrierIds.length);
    expect(lines.filter((l) => l.startsWith('warn') && l.includes('slow to answer'))).toHaveLength(1);
    await carrier.close();
  });

  it('joins a long reply whose other parts came while the carrier was closing, as its binds drained', async () => {
    const sim = await kit.simulator({ submitRespDelayMs: 600 });
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port, { binds: 2, submitTimeoutMs: 5_000 }), quietLog);
    const replies: string[] = [];
    carrier.onInbound((m) => void replies.push(m.text));
    await carrier.ready();
    for (let i = 0; i < 300 && sim.boundCount < 2; i++) await new Promise((r) => setTimeout(r, 10));
    const long = 'Kia ora e hoa mā, kei te pēhea koe? 😀 '.repeat(6);
    const reference = 77;
    const parts = await sim.originate({
      source: '+64219876543',
      destination: '4000',
      text: long,
      concatReference: reference,
      onlyParts: [1],
      spreadParts: true,
    });
    expect(parts).toBeGreaterThan(2);
    // A submit still waiting for its answer keeps the binds draining, and bound, for a while after close().
    const sending = carrier.send({ id: 'm-2', destination: '+6421000002', source: 'SHOP', content: 'Tēnā koe' } as never).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    const closing = carrier.close();
    await new Promise((r) => setTimeout(r, 100));
    const rest = Array.from({ length: parts - 1 }, (_, i) => i + 2);
    await sim.originate({ source: '+64219876543', destination: '4000', text: long, concatReference: reference, onlyParts: rest, spreadParts: true });
    await closing;
    await sending;
    for (let i = 0; i < 100 && replies.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(replies).toEqual([long]);
  });

  it('warns once, not once a receipt, when a burst of receipts cannot be recorded (Redis away a second)', async () => {
    const sim = await kit.simulator({ receiptRetryMs: 60_000 });
    const { log, warnings } = keptWarnings();
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), log);
    kit.defer(() => carrier.close());
    let refused = 0;
    carrier.onReport(async () => {
      refused++;
      throw new Error('Redis is away');
    });
    await carrier.ready();
    for (let i = 0; i < 20; i++) await carrier.send({ id: `m-${i}`, destination: `+64210000${i}`, source: 'SHOP', content: 'Kia ora 👋🏽' } as never);
    for (let i = 0; i < 300 && refused < 20; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    expect(refused).toBe(20);
    // The other 19 are said in one line a minute after this one (rate-limited-warning.test.ts).
    const notRecorded = warnings.filter((w) => w.msg === 'delivery receipt not recorded; the SMSC will send it again');
    expect(notRecorded).toHaveLength(1);
    expect(notRecorded[0]!.fields).toMatchObject({ carrier: 'spark', receipts: 1 });
  });

  it('sends, and gets receipts and replies, through an SMSC that takes only a transmitter and a receiver bind (no transceiver, as SMPP 3.3)', async () => {
    const sim = await kit.simulator({ binds: ['transmitter', 'receiver'] });
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port, { bindMode: 'transmitter_receiver' }), quietLog);
    kit.defer(() => carrier.close());
    const reports: string[] = [];
    const replies: string[] = [];
    carrier.onReport((r) => void reports.push(r.status));
    carrier.onInbound((m) => void replies.push(m.text));
    await carrier.ready();
    for (let i = 0; i < 300 && sim.boundCount < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(
      sim
        .sessions()
        .filter((s) => s.bound)
        .map((s) => s.mode)
        .sort(),
    ).toEqual(['receiver', 'transmitter']);
    const sent = await carrier.send({ id: 'm-3', destination: '+6421000003', source: 'SHOP', content: 'Kia ora 👋🏽 — nau mai' } as never);
    expect(sent.carrierIds).toHaveLength(1);
    for (let i = 0; i < 300 && reports.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(reports).toEqual(['received']);
    const long = 'Tēnā koe, he pātai tāku mō te hui 你好 '.repeat(6);
    await sim.originate({ source: '+64219876543', destination: '4000', text: long });
    for (let i = 0; i < 300 && replies.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(replies).toEqual([long]);
    expect(carrier.bindsUp).toBe(1);
    expect(carrier.snapshots().map((s) => [s.bind, s.up, s.windowSize])).toEqual([
      [`spark hermod@localhost:${sim.port}`, true, 10],
      [`spark hermod@localhost:${sim.port}/receiver`, true, 0],
    ]);
  });

  it('says why it cannot bind to an SMSC that takes no transceiver, when it was not told to bind as transmitter and receiver', async () => {
    const sim = await kit.simulator({ binds: ['transmitter', 'receiver'] });
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    for (let i = 0; i < 300 && !carrier.snapshots()[0]!.lastError; i++) await new Promise((r) => setTimeout(r, 10));
    expect(carrier.snapshots()[0]!.lastError).toMatch(/bind failed: .*ESME_RINVCMDID/);
    expect(carrier.bindsUp).toBe(0);
  });

  it('takes receipts and long replies an SMSC sends as data_sm, answering each with data_sm_resp', async () => {
    const sim = await kit.simulator({ deliverWith: 'data_sm', outcomes: { delivered: 1, undeliverable: 1 }, seed: 7 });
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    const reports: { status: string; errorCode: string }[] = [];
    const replies: string[] = [];
    carrier.onReport((r) => void reports.push({ status: r.status, errorCode: r.errorCode }));
    carrier.onInbound((m) => void replies.push(m.text));
    await carrier.ready();
    for (let i = 0; i < 6; i++)
      await carrier.send({ id: `m-${i}`, destination: `+642100000${i}`, source: 'SHOP', content: 'Kia ora 👋🏽 — nau mai, haere mai' } as never);
    for (let i = 0; i < 300 && reports.length < 6; i++) await new Promise((r) => setTimeout(r, 10));
    expect(reports).toHaveLength(6);
    expect(new Set(reports.map((r) => r.status))).toEqual(new Set(['received', 'failed']));
    expect(reports.filter((r) => r.status === 'failed').every((r) => r.errorCode !== '')).toBe(true);
    const long = 'Tēnā koe, he pātai tāku mō te hui āpōpō 你好 👩🏽‍💻 '.repeat(5);
    expect(await sim.originate({ source: '+64219876543', destination: '4000', text: long })).toBeGreaterThan(1);
    for (let i = 0; i < 300 && replies.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(replies).toEqual([long]);
    // Every receipt was answered (the simulator owes none and resends none).
    expect(sim.receiptCount).toBe(6);
  });

  it('keeps its receivers bound while its transmitters drain at a stop, so receipts and the rest of a long reply still come', async () => {
    const sim = await kit.simulator({ binds: ['transmitter', 'receiver'], submitRespDelayMs: 600 });
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port, { bindMode: 'transmitter_receiver', submitTimeoutMs: 5_000 }), quietLog);
    const replies: string[] = [];
    carrier.onInbound((m) => void replies.push(m.text));
    await carrier.ready();
    for (let i = 0; i < 300 && sim.boundCount < 2; i++) await new Promise((r) => setTimeout(r, 10));
    const long = 'Kia ora e hoa mā, kei te pēhea koe? 😀 '.repeat(6);
    const parts = await sim.originate({ source: '+64219876543', destination: '4000', text: long, concatReference: 9, onlyParts: [1] });
    // A submit waiting for its answer keeps the transmitter draining for a while after close().
    const sending = carrier.send({ id: 'm-4', destination: '+6421000004', source: 'SHOP', content: 'Tēnā koe' } as never).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    const closing = carrier.close();
    await new Promise((r) => setTimeout(r, 100));
    const rest = Array.from({ length: parts - 1 }, (_, i) => i + 2);
    await sim.originate({ source: '+64219876543', destination: '4000', text: long, concatReference: 9, onlyParts: rest });
    await closing;
    await sending;
    for (let i = 0; i < 100 && replies.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(replies).toEqual([long]);
  });
});
