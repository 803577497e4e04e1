import { describe, expect, it } from 'vitest';
import type { OutboundJob } from '../../core/ports/bus-payloads';
import { quietLog, smppTestKit } from '../simulators/smpp-test-kit';
import { carrierConfig } from './carrier-config-test-kit';
import { createSmppCarrier } from './smpp-carrier';

const kit = smppTestKit();

const job = (content = 'Kia ora', source = 'SHOP'): OutboundJob =>
  ({ id: 'm-1', applicationId: 'app', channel: 'sms', destination: '+6421000001', source, content, acceptedAt: Date.now() }) as OutboundJob;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SMPP carrier query', () => {
  it('reports nothing for a message still en route, and what it became once final, by the carrier id its submit gave', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 300 });
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    await carrier.ready();
    const sent = await carrier.send(job());
    expect(await carrier.query(job(), sent.carrierIds)).toEqual([]);
    await sleep(350);
    const [report, ...more] = await carrier.query(job(), sent.carrierIds);
    expect(more).toEqual([]);
    expect(report).toEqual({ carrierId: sent.carrierIds[0], status: 'received', at: expect.any(Number), errorCode: '', detail: 'found by query_sm' });
    // The final date has tenths of a second: the receipt's time, not the time of asking.
    expect(report!.at % 100).toBe(0);
    expect(report!.at).toBeLessThanOrEqual(Date.now());
    expect(report!.at).toBeGreaterThan(Date.now() - 2000);
  });

  it('reports an undeliverable message failed with the error code as receipts write it, and each part of a long one', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0, outcomes: { undeliverable: 1 } });
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    await carrier.ready();
    const long = job('Tēnā koe e hoa, he pātai tāku mō te hui āpōpō 👩🏽‍💻 '.repeat(4), '+6421999000');
    const sent = await carrier.send(long);
    expect(sent.carrierIds.length).toBeGreaterThan(1);
    await sleep(30);
    const reports = await carrier.query(long, sent.carrierIds);
    expect(reports.map((r) => r.carrierId)).toEqual(sent.carrierIds);
    expect(reports.every((r) => r.status === 'failed' && r.errorCode === '001')).toBe(true);
  });

  it('skips ids of other carriers and ids the SMSC does not know, and asks on a transmitter beside a receiver', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0 });
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port, { bindMode: 'transmitter_receiver' }), quietLog);
    kit.defer(() => carrier.close());
    await carrier.ready();
    const sent = await carrier.send(job());
    await sleep(30);
    const reports = await carrier.query(job(), ['other:1a2b', 'spark:ffffffffff', ...sent.carrierIds]);
    expect(reports.map((r) => [r.carrierId, r.status])).toEqual([[sent.carrierIds[0], 'received']]);
    // Another source is another ESME's message, as far as the SMSC can tell.
    expect(await carrier.query(job('Kia ora', 'OTHER'), sent.carrierIds)).toEqual([]);
  });

  it('finds a message whose id the SMSC writes zero-padded in upper case, though hermod keeps it plain', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0, idStyles: { submit: { upper: true, width: 20 } } });
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    await carrier.ready();
    const sent = await carrier.send(job());
    expect(sent.carrierIds[0]).toMatch(/^spark:[1-9a-f][0-9a-f]*$/);
    await sleep(30);
    expect((await carrier.query(job(), sent.carrierIds)).map((r) => r.status)).toEqual(['received']);
  });

  it('rejects, retryably, when no bind is up; asks nothing for ids that are not its own', async () => {
    const sim = await kit.simulator();
    const carrier = createSmppCarrier(carrierConfig('spark', sim.port), quietLog);
    kit.defer(() => carrier.close());
    await carrier.ready();
    await sim.stop();
    for (let i = 0; i < 300 && carrier.bindsUp > 0; i++) await sleep(10);
    await expect(carrier.query(job(), ['spark:1a2b'])).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    expect(await carrier.query(job(), ['other:1a2b'])).toEqual([]);
  });
});
