import { toHermodError } from '../../lib/errors';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMemoryState } from '../../core/adapters/memory-state';
import { createRouteMatcher } from '../../core/domain/route-matcher';
import type { OutboundJob } from '../../core/ports/bus-payloads';
import type { CarrierConfig, RouteRule } from '../../lib/carriers-file';
import { CommandStatus } from '../carriers/smpp/command-status';
import type { SimulatedSubmit, SmscSimulator } from '../simulators/smsc-simulator';
import { quietLog, smppTestKit } from '../simulators/smpp-test-kit';
import { carrierConfig } from './carrier-config-test-kit';
import { createRoutedCarrier } from './routed-carrier';
import { createSmppCarrier } from './smpp-carrier';
import { receiptIdAsSubmitId } from './carrier-message-id';
import { takenParts, takenPartsRoute } from '../carrier';
import { planSms } from '../../core/domain/sms-segments';

const kit = smppTestKit();
const KIA_ORA = 'Kia ora, e hoa mā — tēnā koe 👋🏽';

const job = (destination: string, content = KIA_ORA): OutboundJob => ({
  id: randomUUID(),
  applicationId: 'acme',
  channel: 'sms',
  destination,
  source: 'Korero',
  content,
  acceptedAt: Date.now(),
});

/** Accepted submits each simulator saw, by destination. */
function watch(sim: SmscSimulator): SimulatedSubmit[] {
  const seen: SimulatedSubmit[] = [];
  sim.on('submit', (s) => seen.push(s));
  return seen;
}

const NZ: RouteRule = {
  name: 'nz',
  prefixes: ['+6421'],
  applications: [],
  channels: [],
  source: undefined,
  target: { kind: 'failover', carriers: ['spark', 'one-nz'] },
};

function routed(configs: CarrierConfig[], rules: RouteRule[], state = createMemoryState(), waitForCarrierMs = 5000) {
  const carriers = configs.map((c) => createSmppCarrier(c, quietLog));
  const r = createRoutedCarrier({
    carriers,
    configs,
    decide: createRouteMatcher({ rules, defaultTarget: { kind: 'carrier', carriers: [configs.at(-1)!.name] }, ported: new Map() }),
    state,
    log: quietLog,
    waitForCarrierMs,
  });
  kit.defer(() => r.close());
  return r;
}

const eventually = async (check: () => boolean, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('the routed SMS carrier', () => {
  it('submits each message to the carrier its route names and says which rule and carrier it was', async () => {
    const [spark, oneNz] = [await kit.simulator(), await kit.simulator()];
    const [atSpark, atOneNz] = [watch(spark), watch(oneNz)];
    const r = routed([carrierConfig('spark', spark.port, { sourceTon: 5, sourceNpi: 0 }), carrierConfig('one-nz', oneNz.port)], [NZ]);
    await r.ready();
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));

    const nz = await r.send(job('+64211234567'));
    const other = await r.send(job('+819012345678', '你好，世界'));
    expect(nz.detail).toBe('route nz → carrier spark');
    expect(other.detail).toBe('route default → carrier one-nz');
    expect(atSpark.map((s) => s.destination)).toEqual(['+64211234567']);
    expect(atOneNz.map((s) => [s.destination, s.text])).toEqual([['+819012345678', '你好，世界']]);
  });

  it('moves messages to the failover carrier while every bind of the first is down, and uses it again once a bind is back', async () => {
    const [spark, oneNz] = [await kit.simulator(), await kit.simulator()];
    const [atSpark, atOneNz] = [watch(spark), watch(oneNz)];
    const r = routed([carrierConfig('spark', spark.port, { binds: 2 }), carrierConfig('one-nz', oneNz.port)], [NZ]);
    await eventually(() => r.statuses().every((s) => s.bindsUp === s.binds));

    await spark.stop();
    await eventually(() => r.statuses()[0]!.state === 'down');
    const moved = await Promise.all(Array.from({ length: 10 }, (_, i) => r.send(job(`+642100000${i}`))));
    expect(moved.every((m) => m.detail === 'route nz → carrier one-nz (failover from spark)')).toBe(true);
    expect(atOneNz).toHaveLength(10);

    await spark.start();
    await eventually(() => r.statuses()[0]!.bindsUp === 2);
    expect((await r.send(job('+64211111111'))).detail).toBe('route nz → carrier spark');
    expect(atSpark.map((s) => s.destination)).toEqual(['+64211111111']);
  });

  it('backs off a carrier that answers ESME_RTHROTTLED while another carrier runs at full speed, and loses nothing', async () => {
    const [spark, oneNz] = [await kit.simulator({ throttlePerSecond: 10 }), await kit.simulator()];
    const [atSpark, atOneNz] = [watch(spark), watch(oneNz)];
    const throttled: number[] = [];
    spark.on('submit', (s) => s.status === CommandStatus.ESME_RTHROTTLED && throttled.push(Date.now()));
    const r = routed([carrierConfig('spark', spark.port, { errorThreshold: 1000 }), carrierConfig('one-nz', oneNz.port)], [NZ], createMemoryState(), 30_000);
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));

    const started = Date.now();
    const slow = Promise.all(Array.from({ length: 25 }, (_, i) => r.send(job(`+64210000${String(i).padStart(3, '0')}`))));
    const fast = await Promise.all(Array.from({ length: 200 }, (_, i) => r.send(job(`+8190000${String(i).padStart(3, '0')}`))));
    const fastMs = Date.now() - started;
    expect(fast).toHaveLength(200);
    expect(fastMs).toBeLessThan(1500);
    expect(r.statuses()[0]!.lastError).toBe('ESME_RTHROTTLED');
    await slow;
    expect(throttled.length).toBeGreaterThan(0);
    expect(new Set(atSpark.filter((s) => s.status === 0).map((s) => s.destination)).size).toBe(25);
    expect(atOneNz).toHaveLength(200);
  });

  it('passes a carrier answering system errors over once they reach its threshold, and tries it again after its cool-down', async () => {
    let failing = true;
    const [spark, oneNz] = [await kit.simulator({ statusFor: () => (failing ? CommandStatus.ESME_RSYSERR : undefined) }), await kit.simulator()];
    const atOneNz = watch(oneNz);
    const r = routed([carrierConfig('spark', spark.port, { errorThreshold: 3, errorCooldownMs: 1500 }), carrierConfig('one-nz', oneNz.port)], [NZ]);
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));

    // Each failed submit goes back to the channel worker, which retries it later.
    for (let i = 0; i < 3; i++) await expect(r.send(job('+64210000001'))).rejects.toMatchObject({ retryable: true });
    expect(r.statuses()[0]).toMatchObject({ state: 'failing', lastError: 'SMSC answered ESME_RSYSERR' });
    expect((await r.send(job('+64210000002'))).detail).toBe('route nz → carrier one-nz (failover from spark)');
    expect(atOneNz.map((s) => s.destination)).toEqual(['+64210000002']);

    failing = false;
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect((await r.send(job('+64210000003'))).detail).toBe('route nz → carrier spark');
    expect(r.statuses()[0]!.state).toBe('up');
  });

  it('keeps a carrier within its submits per second when two workers share the hot state', async () => {
    const sim = await kit.simulator();
    const at: number[] = [];
    sim.on('submit', () => at.push(Date.now()));
    const state = createMemoryState();
    const config = carrierConfig('spark', sim.port, { maxSubmitsPerSecond: 20 });
    const workers = [routed([config], [], state), routed([config], [], state)];
    for (const w of workers) await eventually(() => w.statuses()[0]!.bindsUp === 1);

    await Promise.all(workers.flatMap((w) => Array.from({ length: 50 }, () => w.send(job('+64215550000')))));
    const perSecond = new Map<number, number>();
    for (const t of at) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    expect(at).toHaveLength(100);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(21);
    at.sort((a, b) => a - b);
    // Any second, not just whole ones: 20 and one slot's share.
    for (let i = 20 + 1; i < at.length; i++) expect(at[i]! - at[i - 21]!).toBeGreaterThan(1000 - 50);
  });

  it('keeps apart two carriers that number their messages the same way, in submits and in their receipts', async () => {
    const [spark, oneNz] = [await kit.simulator({ seed: 7 }), await kit.simulator({ seed: 7 })];
    const r = routed([carrierConfig('spark', spark.port), carrierConfig('one-nz', oneNz.port)], [NZ]);
    const receipts: string[] = [];
    r.onReport((report) => void receipts.push(report.carrierId));
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));

    const a = await r.send(job('+64211234567'));
    const b = await r.send(job('+819012345678'));
    expect(a.carrierIds[0]!.startsWith('spark:')).toBe(true);
    expect(b.carrierIds[0]!.startsWith('one-nz:')).toBe(true);
    // Both simulators gave the same id.
    expect(a.carrierIds[0]!.slice('spark:'.length)).toBe(b.carrierIds[0]!.slice('one-nz:'.length));
    await eventually(() => receipts.length === 2);
    expect(receipts.sort()).toEqual([...a.carrierIds, ...b.carrierIds].sort());
  });

  // How real SMSCs write the same message id in submit_sm_resp and in its receipt.
  const idWritings: { name: string; sim: Parameters<typeof kit.simulator>[0]; submitIds: 'hex' | 'decimal'; receiptIds: 'hex' | 'decimal' }[] = [
    {
      name: 'upper-case hex, receipts in lower case',
      sim: { idStyles: { submit: { upper: true } }, receiptIdTlv: 'none' },
      submitIds: 'hex',
      receiptIds: 'hex',
    },
    { name: 'zero-padded hex, receipts unpadded', sim: { idStyles: { submit: { width: 20 } }, receiptIdTlv: 'none' }, submitIds: 'hex', receiptIds: 'hex' },
    {
      name: 'upper-case hex, receipts in zero-padded decimal text with the TLV per SMPP 3.4',
      sim: { submitIds: 'hex', receiptIds: 'decimal', idStyles: { submit: { upper: true }, receipt: { width: 24 } } },
      submitIds: 'hex',
      receiptIds: 'decimal',
    },
    {
      name: 'upper-case hex, receipts in decimal text only (SMPP 3.3 style)',
      sim: { submitIds: 'hex', receiptIds: 'decimal', idStyles: { submit: { upper: true, width: 20 } }, receiptIdTlv: 'none' },
      submitIds: 'hex',
      receiptIds: 'decimal',
    },
    {
      name: 'hex, receipts in decimal with the same decimal id in the TLV',
      sim: { submitIds: 'hex', receiptIds: 'decimal', receiptIdTlv: 'receipt' },
      submitIds: 'hex',
      receiptIds: 'decimal',
    },
    {
      name: 'zero-padded decimal, receipts in upper-case hex',
      sim: { submitIds: 'decimal', receiptIds: 'hex', idStyles: { submit: { width: 24 }, receipt: { upper: true } } },
      submitIds: 'decimal',
      receiptIds: 'hex',
    },
  ];
  it.each(idWritings)('matches each receipt to its message when the SMSC writes ids as $name', async ({ sim, submitIds, receiptIds }) => {
    const smsc = await kit.simulator({ outcomes: { delivered: 1 }, receiptDelayMs: 0, ...sim });
    const r = routed([carrierConfig('spark', smsc.port, { submitIds, receiptIds })], []);
    const reports: string[] = [];
    r.onReport((report) => void reports.push(report.carrierId));
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));
    const sent = [await r.send(job('+64211234567')), await r.send(job('+64211234568', 'x'.repeat(200)))];
    const carrierIds = sent.flatMap((s) => s.carrierIds);
    expect(carrierIds).toHaveLength(3);
    await eventually(() => reports.length === 3);
    expect(reports.sort()).toEqual(carrierIds.sort());
  });

  it('tells beside each receipt the carrier id as the version before kept it (as written), so a message it submitted still finds its receipt', async () => {
    const smsc = await kit.simulator({
      outcomes: { delivered: 1 },
      receiptDelayMs: 0,
      receiptIdTlv: 'none',
      idStyles: { submit: { upper: true, width: 20 }, receipt: { upper: true, width: 20 } },
    });
    const submits = watch(smsc);
    const r = routed([carrierConfig('spark', smsc.port)], []);
    const reports: { carrierId: string; carrierIdAsWritten?: string }[] = [];
    r.onReport((report) => void reports.push(report));
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));
    const { carrierIds } = await r.send(job('+64211234567'));
    await eventually(() => reports.length === 1);
    const written = submits[0]!.carrierMessageId!;
    expect(written).toMatch(/^0+[1-9A-F][0-9A-F]*$/);
    expect(reports[0]).toEqual(expect.objectContaining({ carrierId: carrierIds[0], carrierIdAsWritten: `spark:${written}` }));
  });

  /** A simulator that answers `status` to part 2 of each long message the first `times` times it sees it. */
  const refusingPartTwo = async (status: number, times: number) => {
    const seen = new Map<string, number>();
    const smsc = await kit.simulator({
      outcomes: { delivered: 1 },
      receiptDelayMs: 0,
      statusFor: (submit) => {
        if (submit.concat?.seq !== 2) return undefined;
        const n = (seen.get(submit.destination) ?? 0) + 1;
        seen.set(submit.destination, n);
        return n <= times ? status : undefined;
      },
    });
    return { smsc, submits: watch(smsc) };
  };
  const LONG = 'Kia ora, e hoa mā — tēnā koe i tēnei rā 👋🏽 '.repeat(4);

  it.each([
    ['throttles it once', CommandStatus.ESME_RTHROTTLED, 1],
    ['throttles it five times running', CommandStatus.ESME_RTHROTTLED, 5],
    ['answers its queue is full', CommandStatus.ESME_RMSGQFUL, 2],
  ])(
    'submits again only the part of a long message the SMSC %s, under the same concatenation reference, so the handset gets each part once',
    async (_, status, times) => {
      const { smsc, submits } = await refusingPartTwo(status, times);
      const r = routed([carrierConfig('spark', smsc.port)], []);
      const reports: string[] = [];
      r.onReport((report) => void reports.push(report.carrierId));
      await eventually(() => r.statuses().every((s) => s.bindsUp === 1));

      const { carrierIds } = await r.send(job('+64211234567', LONG));
      const accepted = submits.filter((s) => s.status === 0);
      const parts = accepted[0]!.concat!.total;
      expect(parts).toBeGreaterThanOrEqual(3);
      expect(accepted.map((s) => s.concat!.seq).sort()).toEqual(Array.from({ length: parts }, (_, i) => i + 1));
      expect(new Set(accepted.map((s) => s.concat!.ref)).size).toBe(1);
      expect(
        [...accepted]
          .sort((a, b) => a.concat!.seq - b.concat!.seq)
          .map((s) => s.text)
          .join(''),
      ).toBe(LONG);
      expect(submits.filter((s) => s.status !== 0)).toHaveLength(times);
      expect(carrierIds).toHaveLength(parts);
      await eventually(() => reports.length === parts);
      expect(reports.sort()).toEqual([...carrierIds].sort());
    },
  );

  it('refuses a long message whose later part the SMSC refuses for good, naming the part, without sending the parts it took again', async () => {
    const { smsc, submits } = await refusingPartTwo(CommandStatus.ESME_RINVDSTADR, 100);
    const r = routed([carrierConfig('spark', smsc.port)], []);
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));
    await expect(r.send(job('+64211234567', LONG))).rejects.toMatchObject({ retryable: false, message: expect.stringMatching(/part 2 of \d/) });
    // Every part but the refused one went once; the refused one once.
    const bySeq = new Map<number, number>();
    for (const s of submits) bySeq.set(s.concat!.seq, (bySeq.get(s.concat!.seq) ?? 0) + 1);
    expect([...bySeq.values()].every((n) => n === 1)).toBe(true);
  });

  it('names, with a long message refused after its carrier took some parts, the route those parts went by and their carrier ids', async () => {
    const { smsc } = await refusingPartTwo(CommandStatus.ESME_RINVDSTADR, 100);
    const r = routed([carrierConfig('spark', smsc.port)], [{ ...NZ, target: { kind: 'carrier', carriers: ['spark'] } }]);
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));
    const refused = await r.send(job('+64211234567', LONG)).catch((e: unknown) => e);
    expect(takenParts(refused)).toHaveLength(planSms(LONG).segments.length - 1);
    expect(takenPartsRoute(refused)).toBe('route nz → carrier spark');
  });

  it('asks each carrier about the carrier ids it gave (query_sm), none about another’s, and skips ids of a carrier gone from the file', async () => {
    const [spark, oneNz] = [await kit.simulator({ receiptDelayMs: 20, outcomes: { undeliverable: 1 } }), await kit.simulator({ receiptDelayMs: 20 })];
    const r = routed([carrierConfig('spark', spark.port), carrierConfig('one-nz', oneNz.port)], [NZ]);
    await r.ready();
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));
    const nzJob = job('+64211234567');
    const otherJob = job('+819012345678', '你好，世界 — '.repeat(10));
    const nz = await r.send(nzJob);
    const other = await r.send(otherJob);
    expect(other.carrierIds.length).toBeGreaterThan(1);
    await eventually(() => spark.receiptCount + oneNz.receiptCount === 1 + other.carrierIds.length);
    const asked = await r.query!(otherJob, [...other.carrierIds, 'gone:1a2b']);
    expect(asked.map((a) => [a.carrierId, a.status])).toEqual(other.carrierIds.map((id) => [id, 'received']));
    expect(other.carrierIds.every((id) => id.startsWith('one-nz:'))).toBe(true);
    const [refused] = await r.query!(nzJob, nz.carrierIds);
    expect(refused).toMatchObject({ carrierId: nz.carrierIds[0], status: 'failed' });
  });

  it('keeps one carrier’s answers while another cannot be asked, and calls a question about carriers all gone from the file unaskable', async () => {
    const [spark, oneNz] = [await kit.simulator({ receiptDelayMs: 20 }), await kit.simulator({ receiptDelayMs: 20 })];
    const r = routed([carrierConfig('spark', spark.port), carrierConfig('one-nz', oneNz.port)], [NZ]);
    await r.ready();
    await eventually(() => r.statuses().every((s) => s.bindsUp === 1));
    const nzJob = job('+64211234567', 'Kia ora, e hoa mā 👋🏽');
    const nz = await r.send(nzJob);
    const other = await r.send(job('+819012345678', '你好，世界'));
    await eventually(() => spark.receiptCount + oneNz.receiptCount === 2);
    expect(nz.carrierIds[0]!.startsWith('spark:')).toBe(true);

    // Spark's SMSC goes away: one-nz still answers about its own part.
    await spark.stop();
    await eventually(() => r.statuses().find((s) => s.carrier === 'spark')!.bindsUp === 0);
    const asked = await r.query!(nzJob, [...nz.carrierIds, ...other.carrierIds]);
    expect(asked.map((a) => [a.carrierId, a.status])).toEqual([[other.carrierIds[0], 'received']]);
    // Only spark's: asked again later, not given up.
    const away = await r.query!(nzJob, nz.carrierIds).then(
      () => undefined,
      (e: unknown) => toHermodError(e),
    );
    expect(away?.retryable).toBe(true);
    // A carrier removed from the file: nobody to ask, for good.
    const gone = await r.query!(nzJob, ['gone:1a2b']).then(
      () => undefined,
      (e: unknown) => toHermodError(e),
    );
    expect(gone).toMatchObject({ code: 'unprocessable', retryable: false });
  });

  it('reads a receipt id written in decimal as the hex id submit_sm_resp gave, and the other way round', () => {
    expect(receiptIdAsSubmitId('255', 'decimal', 'hex')).toBe('ff');
    expect(receiptIdAsSubmitId('ff', 'hex', 'decimal')).toBe('255');
    expect(receiptIdAsSubmitId('1a2b', 'hex', 'hex')).toBe('1a2b');
    expect(receiptIdAsSubmitId('not-a-number', 'decimal', 'hex')).toBe('not-a-number');
  });
});
