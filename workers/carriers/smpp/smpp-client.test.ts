import { describe, expect, it } from 'vitest';
import type { HermodError } from '../../../lib/errors';
import { eventually } from '../../../test/support/eventually';
import { once, smppTestKit } from '../../simulators/smpp-test-kit';
import { CommandStatus } from './command-status';
import { planSms } from '../../../core/domain/sms-segments';
import type { DeliveryReceipt, MoMessage, SubmitRequest } from './smpp-client';
import { hermodRejection } from '../../../test/support/hermod-rejection';

const kit = smppTestKit();

function sms(text: string, destination = '+64211234567'): SubmitRequest {
  const plan = planSms(text);
  return { source: 'Hermod', destination, shortMessage: plan.segments[0]!, dataCoding: plan.dataCoding, esmClass: plan.esmClass, registeredDelivery: 1 };
}

const rejection = hermodRejection;

describe('SMPP client', () => {
  it('binds as a transceiver and gets receipts correlated by the carrier message id', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    expect(client.isBound).toBe(true);
    expect(sim.sessions()).toMatchObject([{ systemId: 'hermod', mode: 'transceiver', bound: true }]);

    const receipts: DeliveryReceipt[] = [];
    client.on('receipt', (r, settle) => {
      receipts.push(r);
      settle(true);
    });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => client.submit(sms(`hello ${i}`))));
    const ids = results.map((r) => r.messageId);
    expect(new Set(ids).size).toBe(20);
    await eventually(() => (receipts.length === 20 ? true : undefined));
    expect(new Set(receipts.map((r) => r.carrierMessageId))).toEqual(new Set(ids));
    expect(receipts.every((r) => r.state === 'delivered' && r.destination === 'Hermod' && r.source === '+64211234567')).toBe(true);
  });

  it('reports undeliverable and expired outcomes from the receipt', async () => {
    const sim = await kit.simulator({ outcomes: { undeliverable: 1, expired: 1 }, seed: 7 });
    const client = await kit.client(sim);
    const outcomes = new Map<string, string>();
    sim.on('submit', (s) => s.carrierMessageId && outcomes.set(s.carrierMessageId, s.outcome!));
    const receipts: DeliveryReceipt[] = [];
    client.on('receipt', (r, settle) => {
      receipts.push(r);
      settle(true);
    });
    await Promise.all(Array.from({ length: 10 }, () => client.submit(sms('x'))));
    await eventually(() => (receipts.length === 10 ? true : undefined));
    for (const r of receipts) expect(r.state).toBe(outcomes.get(r.carrierMessageId));
    expect(new Set(receipts.map((r) => r.state))).toEqual(new Set(['undeliverable', 'expired']));
    expect(receipts.find((r) => r.state === 'expired')?.errorCode).toBe('027');
  });

  it('emits a receipt only after the submit it belongs to has resolved, even with no receipt delay', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0 });
    const client = await kit.client(sim);
    const known = new Set<string>();
    const orphans: string[] = [];
    client.on('receipt', (r, settle) => {
      if (!known.has(r.carrierMessageId)) orphans.push(r.carrierMessageId);
      settle(true);
    });
    await Promise.all(Array.from({ length: 50 }, async () => known.add((await client.submit(sms('now'))).messageId)));
    await eventually(() => (sim.receiptCount === 50 ? true : undefined));
    await new Promise((r) => setImmediate(r));
    expect(orphans).toEqual([]);
  });

  it('never has more than windowSize submits outstanding; the rest wait in order', async () => {
    const sim = await kit.simulator({ submitRespDelayMs: 40 });
    const client = await kit.client(sim, { windowSize: 5 });
    const order: number[] = [];
    const sent: number[] = [];
    const all = Array.from({ length: 23 }, (_, i) => client.submit({ ...sms(`m${i}`), onSent: () => sent.push(i) }).then(() => order.push(i)));
    expect(client.windowInUse).toBe(5);
    expect(client.queueLength).toBe(18);
    await Promise.all(all);
    expect(sim.maxOutstanding).toBe(5);
    expect(sim.sessions()[0]!.maxOutstanding).toBe(5);
    expect(sent).toEqual(Array.from({ length: 23 }, (_, i) => i));
    expect(order).toEqual(sent);
    expect(client.windowInUse).toBe(0);
  });

  it('answers the SMSC’s enquire_link and sends its own', async () => {
    const sim = await kit.simulator();
    await kit.client(sim, { enquireLinkMs: 20 });
    expect(await sim.enquireLink()).toBe(1);
    await eventually(() => (sim.enquireLinkCount >= 3 ? true : undefined));
  });

  it('rejects a submit the SMSC refuses permanently with a non-retryable carrier_rejected error', async () => {
    const sim = await kit.simulator({ outcomes: { rejected: 1 } });
    const client = await kit.client(sim);
    const err = await rejection(client.submit(sms('no')));
    expect(err).toMatchObject({ code: 'carrier_rejected', retryable: false });
    expect(err.message).toMatch(/ESME_RSUBMITFAIL/);
  });

  it('rejects a throttled submit, a full queue and an SMSC system error with retryable carrier_transient errors', async () => {
    const statuses = [CommandStatus.ESME_RTHROTTLED, CommandStatus.ESME_RMSGQFUL, CommandStatus.ESME_RSYSERR, CommandStatus.ESME_RINVDSTADR];
    const sim = await kit.simulator({ statusFor: (s) => statuses[Number(s.text)] });
    const client = await kit.client(sim);
    const errors = await Promise.all(statuses.map((_, i) => rejection(client.submit(sms(String(i))))));
    expect(errors.map((e) => [e.code, e.retryable])).toEqual([
      ['carrier_transient', true],
      ['carrier_transient', true],
      ['carrier_transient', true],
      ['carrier_rejected', false],
    ]);
    expect(errors[0]!.message).toMatch(/ESME_RTHROTTLED/);
  });

  it('times out a submit the SMSC does not answer, with a retryable error, and frees its window slot', async () => {
    const sim = await kit.simulator({ submitRespDelayMs: 300 });
    const client = await kit.client(sim, { submitTimeoutMs: 50, answerWaitMs: 50, windowSize: 1 });
    const first = client.submit(sms('Kia ora — 慢 🐢'));
    const second = client.submit(sms('Привет — 更慢 🐌'));
    expect(await rejection(first)).toMatchObject({ code: 'timeout', retryable: true });
    expect(client.windowInUse).toBe(1); // the second one took the slot
    expect(await rejection(second)).toMatchObject({ code: 'timeout', retryable: true });
  });

  it('takes the answer of a submit the SMSC answers after the submit timeout, its window slot freed meanwhile, and sends it once (trial: a slow SMSC got five copies)', async () => {
    const sim = await kit.simulator({ submitRespDelayMs: 300 });
    const client = await kit.client(sim, { submitTimeoutMs: 50, answerWaitMs: 2_000, windowSize: 1 });
    const slow: string[] = [];
    client.on('slowAnswer', (e: { waitingMs: number }) => slow.push(String(e.waitingMs)));
    const first = client.submit(sms('Kia ora — 慢 🐢'));
    const second = client.submit(sms('Привет — 更慢 🐌'));
    // Past the submit timeout the first one no longer holds the window: the second is on the wire beside it.
    await eventually(() => (sim.submitCount === 2 ? true : undefined), 1_000);
    expect((await first).messageId).toMatch(/^[0-9a-f]+$/);
    expect((await second).messageId).toMatch(/^[0-9a-f]+$/);
    expect(sim.submitCount).toBe(2);
    expect(slow.length).toBeGreaterThanOrEqual(1);
  });

  it('fails a submit with no answer within the answer wait, retryably', async () => {
    const sim = await kit.simulator({ submitRespDelayMs: 1_000 });
    const client = await kit.client(sim, { submitTimeoutMs: 50, answerWaitMs: 200 });
    expect(await rejection(client.submit(sms('Tēnā koe — 无回答')))).toMatchObject({ code: 'timeout', retryable: true });
  });

  it('refuses submits while not bound instead of queueing them forever', async () => {
    const sim = await kit.simulator();
    sim.refuse(true);
    const client = await kit.client(sim, {}, false);
    expect(await rejection(client.submit(sms('你好世界')))).toMatchObject({ code: 'unavailable', retryable: true });
  });

  it('fails in-flight submits with retryable errors when the SMSC goes away, and reconnects when it is back on the same port', async () => {
    const sim = await kit.simulator({ submitRespDelayMs: 1000 });
    const client = await kit.client(sim);
    const port = sim.port;
    const inflight = [client.submit(sms('a')), client.submit(sms('b'))];
    await eventually(() => (sim.submitCount === 2 ? true : undefined));
    const disconnected = once(client, 'disconnected');
    await sim.stop();
    const [event] = await disconnected;
    expect(event).toMatchObject({ failed: 2 });
    for (const p of inflight) expect(await rejection(p)).toMatchObject({ code: 'carrier_transient', retryable: true });
    expect(client.isBound).toBe(false);

    const failures: unknown[] = [];
    client.on('bindFailed', (f) => failures.push(f));
    await eventually(() => (failures.length >= 2 ? true : undefined));

    const again = await kit.simulator({ port });
    await client.ready();
    expect(again.port).toBe(port);
    expect((await client.submit(sms('Kua hoki mai — 👋🏽'))).messageId).toMatch(/^[0-9a-f]+$/);
  });

  it('keeps retrying a refused bind with backoff and reports why', async () => {
    const sim = await kit.simulator({ credentials: [{ systemId: 'hermod', password: 'right' }] });
    const client = await kit.client(sim, { password: 'wrong' }, false);
    const [failure] = await once(client, 'bindFailed');
    expect(failure).toMatchObject({ status: CommandStatus.ESME_RINVPASWD, reason: expect.stringMatching(/ESME_RINVPASWD/) });
    await once(client, 'bindFailed');
    expect(client.isBound).toBe(false);
  });

  it('receives MO messages from the SMSC, reassembling concatenated ones', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    const mo: MoMessage[] = [];
    client.on('mo', (m) => mo.push(m));
    const long = 'Kia ora 😀 '.repeat(20);
    expect(await sim.originate({ source: '+64219876543', destination: '4000', text: 'STOP' })).toBe(1);
    expect(await sim.originate({ source: '+64219876543', destination: '4000', text: long })).toBe(4);
    await eventually(() => (mo.length === 2 ? true : undefined));
    expect(mo).toEqual([
      { source: '+64219876543', destination: '4000', text: 'STOP', dataCoding: 0, parts: 1, carrierRef: '' },
      { source: '+64219876543', destination: '4000', text: long, dataCoding: 8, parts: 4, carrierRef: expect.stringMatching(/^cat:\d+\/4$/) },
    ]);
  });

  it('passes on a long reply whose missing part never comes, once it has waited for it, with a mark where it is missing', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim, { concatTimeoutMs: 400 });
    const mo: MoMessage[] = [];
    client.on('mo', (m) => mo.push(m));
    const long = 'Kia ora, e hoa mā — he pātai tāku 😀 '.repeat(8);
    expect(await sim.originate({ source: '+64219876543', destination: '4000', text: long, onlyParts: [1, 3, 4, 5] })).toBe(5);
    await eventually(() => (mo.length === 1 ? true : undefined), 5000);
    expect(mo[0]).toMatchObject({ source: '+64219876543', destination: '4000', parts: 5, missing: [2] });
    expect(mo[0]!.text.startsWith('Kia ora, e hoa mā — ')).toBe(true);
    expect(mo[0]!.text).toContain('…');
  });

  it('passes on the parts of a long reply it holds when it stops, rather than losing them (the SMSC will not send them again)', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    const mo: MoMessage[] = [];
    client.on('mo', (m) => mo.push(m));
    await sim.originate({ source: '+64219876543', destination: '4000', text: '你好，世界！'.repeat(30), onlyParts: [1] });
    await client.close();
    await eventually(() => (mo.length === 1 ? true : undefined), 2000);
    expect(mo[0]).toMatchObject({ parts: 3, missing: [2, 3], text: expect.stringMatching(/^你好.*…$/) });
  });

  it('sends a body longer than 254 octets as message_payload', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    const text = 'Kia ora, e hoa mā — tēnā koe! Привет, 你好世界 👋🏽🎉 '.repeat(5);
    // UCS-2 (data_coding 8), big-endian: 2 octets per UTF-16 unit, 440 in all.
    const shortMessage = Buffer.from(text, 'utf16le').swap16();
    expect(shortMessage.length).toBeGreaterThan(254);
    const [message] = await Promise.all([once(sim, 'message'), client.submit({ source: '1234', destination: '+6421', shortMessage, dataCoding: 8 })]);
    expect(message[0]).toMatchObject({ text, parts: 1 });
  });

  it('rejects addresses SMPP cannot carry before they reach the window', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    expect(await rejection(client.submit(sms('Kia ora', '+' + '1'.repeat(21))))).toMatchObject({ code: 'invalid_attrib', retryable: false });
    expect(client.windowInUse).toBe(0);
    // source_addr is one octet per character: a macron does not fit, Latin-1 does.
    expect(await rejection(client.submit({ ...sms('Kia ora'), source: 'Māori' }))).toMatchObject({ code: 'invalid_attrib', retryable: false });
    expect(client.windowInUse).toBe(0);
    const [message] = await Promise.all([once(sim, 'message'), client.submit({ ...sms('Kia ora'), source: 'Café' })]);
    expect(message[0]).toMatchObject({ source: 'Café' });
  });

  it('closes by letting in-flight submits finish, then unbinding, and does not reconnect', async () => {
    const sim = await kit.simulator({ submitRespDelayMs: 30 });
    const client = await kit.client(sim);
    const pending = client.submit(sms('Te mea whakamutunga — последнее'));
    const closed = once(sim, 'sessionClosed');
    await client.close();
    expect((await pending).messageId).toBeTruthy();
    await closed;
    expect(await rejection(client.submit(sms('Kua tōmuri — 太晚了')))).toMatchObject({ code: 'unavailable' });
    await new Promise((r) => setTimeout(r, 60));
    expect(sim.boundCount).toBe(0);
  });

  // How fast is bench:peers' and bench:campaign's question; this one is that a full window keeps flowing.
  it('pushes 5,000 submits through one connection with a window of 256, and every receipt comes back', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0 });
    const client = await kit.client(sim, { windowSize: 256 });
    let receipts = 0;
    client.on('receipt', (_r, settle) => {
      receipts++;
      settle(true);
    });
    const shortMessage = Buffer.from('throughput test message');
    await Promise.all(Array.from({ length: 5000 }, (_, i) => client.submit({ source: 'Hermod', destination: `+6421${i}`, shortMessage, dataCoding: 0 })));
    await eventually(() => (receipts === 5000 ? true : undefined), 30_000, 2);
    expect(sim.submitCount).toBe(5000);
  });
});

describe('SMPP client receipts', () => {
  it('answers a receipt only when its listener has it safe, and asks for it again when the listener fails', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0, receiptRetryMs: 100 });
    const client = await kit.client(sim);
    const seen: string[] = [];
    let refuseFirst = true;
    client.on('receipt', (r, settle) => {
      seen.push(r.carrierMessageId);
      if (refuseFirst) {
        refuseFirst = false;
        // Not safe yet: the SMSC keeps owing it and sends it again.
        setTimeout(() => settle(false), 50);
        return;
      }
      setTimeout(() => settle(true), 50);
    });
    const { messageId } = await client.submit(sms('Kia ora, e hoa mā'));
    await eventually(() => (seen.length >= 2 ? true : undefined), 5000);
    expect(seen.slice(0, 2)).toEqual([messageId, messageId]);
    await eventually(() => (sim.receiptCount >= 1 ? true : undefined), 5000);
    await new Promise((r) => setTimeout(r, 300));
    // Acknowledged once the listener settled: no more redeliveries.
    expect(seen.length).toBe(2);
  });

  it('keeps its transceiver bind and every submit while its listener is slow to make receipts safe: no answer it owes is left unread', async () => {
    // A CPU-starved process: receipts wait to be made durable while submits are on the wire. Their answers
    // and the SMSC's enquire_link_resp come on the same socket as the receipts.
    const sim = await kit.simulator({ receiptDelayMs: 0 });
    const client = await kit.client(sim, { windowSize: 256, receiptsInHand: 100, enquireLinkMs: 150, submitTimeoutMs: 400, answerWaitMs: 400 });
    const disconnects: string[] = [];
    client.on('disconnected', (e) => disconnects.push(e.reason));
    const held: ((handled: boolean) => void)[] = [];
    let slow = true;
    client.on('receipt', (_r, settle) => (slow ? void held.push(settle) : settle(true)));
    const shortMessage = Buffer.from('Kia ora — tatari 🐢', 'utf16le');
    const outcomes = Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        client.submit({ source: 'Hermod', destination: `+6421${i}`, shortMessage, dataCoding: 8, registeredDelivery: 1 }).then(
          () => 'taken',
          (err: HermodError) => err.message,
        ),
      ),
    );
    await eventually(() => (held.length >= 100 ? true : undefined), 10_000);
    // Longer than the submit timeout and several enquire_link intervals.
    await new Promise((r) => setTimeout(r, 1500));
    slow = false;
    for (const settle of held.splice(0)) settle(true);
    const results = await outcomes;
    expect(results.filter((r) => r !== 'taken')).toEqual([]);
    expect(disconnects).toEqual([]);
    expect(sim.submitCount).toBe(1000);
    await eventually(() => (sim.receiptCount >= 1000 ? true : undefined), 20_000);
  });

  it('stops reading while its listener holds as many receipts as it may, and reads on once they are made safe, so memory stays bounded', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0 });
    const client = await kit.client(sim, { windowSize: 256, receiptsInHand: 100 });
    const held: ((handled: boolean) => void)[] = [];
    client.on('receipt', (_r, settle) => void held.push(settle));
    const shortMessage = Buffer.from('Kia ora — tatari 🐢', 'utf16le');
    // Submits and their answers share the connection: send them all, then let the receipts pile up unanswered.
    void Promise.all(
      Array.from({ length: 1000 }, (_, i) => client.submit({ source: 'Hermod', destination: `+6421${i}`, shortMessage, dataCoding: 8 })).map((p) =>
        p.catch(() => undefined),
      ),
    );
    await eventually(() => (held.length >= 100 ? true : undefined), 10_000);
    await new Promise((r) => setTimeout(r, 500));
    // What one TCP read brought is parsed whole, so a chunk's worth beyond the bound; not all the SMSC has ready,
    // and no more while they wait.
    const heldThen = held.length;
    expect(heldThen).toBeLessThan(500);
    await new Promise((r) => setTimeout(r, 500));
    expect(held.length).toBe(heldThen);
    // Made safe: it reads on, and every receipt comes.
    const answerAll = setInterval(() => {
      for (const settle of held.splice(0)) settle(true);
    }, 20);
    try {
      await eventually(() => (sim.receiptCount >= 1000 ? true : undefined), 20_000);
    } finally {
      clearInterval(answerAll);
    }
  });
});
