import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CommandId } from '../carriers/smpp/command-id';
import { CommandStatus } from '../carriers/smpp/command-status';
import { FrameDecoder } from '../carriers/smpp/frame-decoder';
import { decodePdu, writePdu, type Pdu } from '../carriers/smpp/pdu';
import { PduWriter } from '../carriers/smpp/pdu-writer';
import { planSms } from '../../core/domain/sms-segments';
import type { DeliveryReceipt } from '../carriers/smpp/smpp-client';
import { sarTlvs } from '../carriers/smpp/tlv';
import { eventually } from '../../test/support/eventually';
import { once, smppTestKit } from './smpp-test-kit';
import { createSmscSimulator, type AssembledMessage, type SentReceipt, type SimulatedSubmit } from './smsc-simulator';

const kit = smppTestKit();

/** A bare TCP peer speaking raw PDUs, for what the client would never send. */
/** Binds as transceiver `hermod` and submits one message asking for a receipt. */
function bindAndSubmitWithReceipt(peer: { send(pdu: Pdu): void }): void {
  peer.send({ commandId: CommandId.bind_transceiver, commandStatus: 0, sequenceNumber: 1, systemId: 'hermod', password: 'pw', systemType: '' });
  peer.send({
    commandId: CommandId.submit_sm,
    commandStatus: 0,
    sequenceNumber: 2,
    sourceAddr: 'Hermod',
    destinationAddr: '64211234567',
    esmClass: 0,
    registeredDelivery: 1,
    dataCoding: 0,
    shortMessage: Buffer.from('hi'),
  });
}

async function rawPeer(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port });
  await once(socket, 'connect');
  const decoder = new FrameDecoder();
  const received: Pdu[] = [];
  socket.on('data', (chunk: Buffer) => decoder.push(chunk, (f) => received.push(decodePdu(f))));
  kit.defer(async () => socket.destroy());
  return {
    received,
    send(pdu: Pdu | Buffer) {
      if (Buffer.isBuffer(pdu)) return socket.write(pdu);
      const w = new PduWriter();
      writePdu(w, pdu);
      socket.write(w.take());
    },
    closed: once(socket, 'close'),
    destroy: () => socket.destroy(),
  };
}

async function submitText(client: Awaited<ReturnType<typeof kit.client>>, text: string, order?: (i: number, n: number) => number) {
  const plan = planSms(text);
  const indexes = plan.segments.map((_, i) => (order ? order(i, plan.count) : i));
  return Promise.all(
    indexes.map((i) =>
      client.submit({ source: 'Hermod', destination: '+64211234567', shortMessage: plan.segments[i]!, dataCoding: plan.dataCoding, esmClass: plan.esmClass }),
    ),
  );
}

describe('SMSC simulator', () => {
  it('reassembles concatenated GSM and UCS-2 texts exactly, in any part order', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    const messages: AssembledMessage[] = [];
    sim.on('message', (m) => messages.push(m));
    // GSM 03.38 on purpose: its escapes are what must not split across parts.
    const gsm = 'Escapes {like} [these] must not split: ' + '€'.repeat(100) + ' ~end~';
    const ucs2 = 'Kia ora, e hoa mā — Привет, 你好世界 👋🏽🎉 never split 🇳🇿 '.repeat(8);
    const gsmIds = await submitText(client, gsm);
    await submitText(client, ucs2, (i, n) => n - 1 - i);
    await eventually(() => (messages.length === 2 ? true : undefined));
    expect(messages[0]).toEqual({
      source: 'Hermod',
      destination: '+64211234567',
      text: gsm,
      parts: planSms(gsm).count,
      carrierMessageId: gsmIds[0]!.messageId,
      carrierMessageIds: gsmIds.map((r) => r.messageId),
    });
    expect(messages[1]).toMatchObject({ text: ucs2, parts: planSms(ucs2).count });
  });

  it('reassembles parts marked with sar_* TLVs instead of a UDH', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    const message = once(sim, 'message');
    // UCS-2 parts, the second sent first.
    const ucs2 = (text: string) => Buffer.from(text, 'utf16le').swap16();
    await Promise.all(
      ['你好世界 👋🏽', 'Kia ora, e hoa mā — '].map((part, i) =>
        client.submit({ source: '555', destination: '+6421', shortMessage: ucs2(part), dataCoding: 8, tlvs: sarTlvs(0x0102, 2, 2 - i) }),
      ),
    );
    expect((await message)[0]).toMatchObject({ text: 'Kia ora, e hoa mā — 你好世界 👋🏽', parts: 2 });
  });

  it('emits a submit event per submit_sm and counts them', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    const submits: SimulatedSubmit[] = [];
    sim.on('submit', (s) => submits.push(s));
    await submitText(client, 'x'.repeat(200));
    expect(sim.submitCount).toBe(2);
    expect(submits.map((s) => [s.concat?.seq, s.status, s.registeredDelivery, s.dataCoding])).toEqual([
      [1, 0, 1, 0],
      [2, 0, 1, 0],
    ]);
  });

  it('answers bind, enquire_link and unbind, and refuses a submit before bind', async () => {
    const sim = await kit.simulator({ systemId: 'test-smsc' });
    const peer = await rawPeer(sim.port);
    peer.send({
      commandId: CommandId.submit_sm,
      commandStatus: 0,
      sequenceNumber: 1,
      sourceAddr: 'a',
      destinationAddr: 'b',
      esmClass: 0,
      registeredDelivery: 0,
      dataCoding: 0,
      shortMessage: Buffer.from('x'),
    });
    peer.send({ commandId: CommandId.bind_transmitter, commandStatus: 0, sequenceNumber: 2, systemId: 'raw', password: 'pw', systemType: '' });
    peer.send({ commandId: CommandId.enquire_link, commandStatus: 0, sequenceNumber: 3 });
    peer.send({ commandId: CommandId.unbind, commandStatus: 0, sequenceNumber: 4 });
    await peer.closed;
    expect(peer.received.map((p) => [p.commandId, p.commandStatus, p.sequenceNumber])).toEqual([
      [CommandId.submit_sm_resp, CommandStatus.ESME_RINVBNDSTS, 1],
      [CommandId.bind_transmitter_resp, 0, 2],
      [CommandId.enquire_link_resp, 0, 3],
      [CommandId.unbind_resp, 0, 4],
    ]);
    expect(peer.received[1]).toMatchObject({ systemId: 'test-smsc' });
    expect(sim.enquireLinkCount).toBe(1);
  });

  it('answers an unknown command with generic_nack and drops a peer that sends an absurd length', async () => {
    const sim = await kit.simulator();
    const peer = await rawPeer(sim.port);
    peer.send(Buffer.from('00000010' + '000000ff' + '00000000' + '00000009', 'hex'));
    await eventually(() => (peer.received.length === 1 ? true : undefined));
    expect(peer.received[0]).toEqual({ commandId: CommandId.generic_nack, commandStatus: CommandStatus.ESME_RINVCMDID, sequenceNumber: 9 });
    peer.send(Buffer.from('ffffffff' + '00000004' + '00000000' + '00000001', 'hex'));
    await peer.closed;
  });

  it('only lets accepted credentials bind', async () => {
    const sim = await kit.simulator({ credentials: [{ systemId: 'hermod', password: 'secret' }] });
    const binds: number[] = [];
    sim.on('bind', (b) => binds.push(b.status));
    await kit.client(sim);
    const stranger = await kit.client(sim, { systemId: 'other' }, false);
    await once(stranger, 'bindFailed');
    expect(binds).toEqual([0, CommandStatus.ESME_RINVSYSID]);
    expect(sim.boundCount).toBe(1);
  });

  it('closes new connections while refusing and accepts them again after', async () => {
    const sim = await kit.simulator();
    sim.refuse(true);
    const client = await kit.client(sim, {}, false);
    await once(client, 'bindFailed');
    await once(client, 'bindFailed');
    expect(sim.sessions()).toEqual([]);
    sim.refuse(false);
    await client.ready();
    expect(sim.boundCount).toBe(1);
  });

  it('keeps a receipt until a session of the same system_id is bound to take it', async () => {
    // A receipt delay the unbind outlasts on a loaded machine, and a wait past it.
    const sim = await kit.simulator({ receiptDelayMs: 250 });
    const first = await kit.client(sim);
    const { messageId } = await first.submit({ source: 'Hermod', destination: '+6421', shortMessage: Buffer.from('hi'), dataCoding: 0 });
    await first.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(sim.receiptCount).toBe(0);
    const second = await kit.client(sim);
    const [receipt] = (await once(second, 'receipt')) as [DeliveryReceipt];
    expect(receipt).toMatchObject({ carrierMessageId: messageId, state: 'delivered' });
  });

  it('emits a receipt event when it sends a delivery receipt, and none while the receipt waits for a bind', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 250 });
    const sent: SentReceipt[] = [];
    sim.on('receipt', (r) => sent.push(r));
    const first = await kit.client(sim);
    const before = Date.now();
    const { messageId } = await first.submit({ source: 'Hermod', destination: '+64211234567', shortMessage: Buffer.from('hi'), dataCoding: 0 });
    await first.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(sent).toEqual([]);
    const second = await kit.client(sim);
    const [receipt] = (await once(second, 'receipt')) as [DeliveryReceipt];
    expect(sent).toEqual([{ carrierMessageId: messageId, destination: '+64211234567', state: 'delivered', at: expect.any(Number) }]);
    expect(receipt.carrierMessageId).toBe(messageId);
    expect(sent[0]!.at).toBeGreaterThanOrEqual(before + 250);
    expect(sent[0]!.at).toBeLessThanOrEqual(Date.now());
  });

  it('writes message ids the way the carrier it stands for does: hex in submit_sm_resp and decimal in receipts’ text, upper case and zero-padded where asked, the TLV as submit_sm_resp gave it', async () => {
    const sim = await kit.simulator({
      receiptDelayMs: 0,
      submitIds: 'hex',
      receiptIds: 'decimal',
      idStyles: { submit: { upper: true, width: 20 }, receipt: { width: 24 } },
    });
    const client = await kit.client(sim);
    const receipts: DeliveryReceipt[] = [];
    client.on('receipt', (r, settle) => {
      receipts.push(r);
      settle(true);
    });
    const { messageId } = await client.submit({ source: 'Hermod', destination: '+64211234567', shortMessage: Buffer.from('Kia ora'), dataCoding: 0 });
    expect(messageId).toMatch(/^0+[1-9A-F][0-9A-F]*$/);
    expect(messageId).toHaveLength(20);
    await eventually(() => (receipts.length >= 1 ? true : undefined));
    expect(receipts[0]).toMatchObject({ carrierMessageId: messageId, idWrittenAs: 'submit' });
  });

  it('sends receipts only when registered_delivery asks for them', async () => {
    const sim = await kit.simulator({ outcomes: { delivered: 1 }, receiptDelayMs: 0 });
    const client = await kit.client(sim);
    const receipts: DeliveryReceipt[] = [];
    client.on('receipt', (r, settle) => {
      receipts.push(r);
      settle(true);
    });
    const base = { source: 'Hermod', destination: '+6421', shortMessage: Buffer.from('x'), dataCoding: 0 };
    const ids = await Promise.all([0, 1, 2].map((registeredDelivery) => client.submit({ ...base, registeredDelivery })));
    await eventually(() => (receipts.length >= 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 20));
    expect(receipts.map((r) => r.carrierMessageId)).toEqual([ids[1]!.messageId]);
  });

  it('picks the same outcomes for the same seed', async () => {
    const outcomes = async (): Promise<string[]> => {
      const sim = await kit.simulator({ seed: 42, outcomes: { delivered: 2, undeliverable: 1, expired: 1, rejected: 1 } });
      const client = await kit.client(sim);
      const seen: string[] = [];
      sim.on('submit', (s) => seen.push(s.outcome!));
      for (let i = 0; i < 20; i++) await client.submit({ source: 'a', destination: '1', shortMessage: Buffer.from('x'), dataCoding: 0 }).catch(() => undefined);
      return seen;
    };
    const a = await outcomes();
    expect(a).toEqual(await outcomes());
    expect(new Set(a).size).toBe(4);
  });

  it('throttles submits beyond its window and its rate', async () => {
    const sim = await kit.simulator({ maxWindow: 2, submitRespDelayMs: 20 });
    const client = await kit.client(sim, { windowSize: 4 });
    const results = await Promise.allSettled(
      Array.from({ length: 4 }, () => client.submit({ source: 'a', destination: '1', shortMessage: Buffer.from('x'), dataCoding: 0 })),
    );
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);

    const limited = await kit.simulator({ throttlePerSecond: 3 });
    const other = await kit.client(limited);
    const settled = await Promise.allSettled(
      Array.from({ length: 5 }, () => other.submit({ source: 'a', destination: '1', shortMessage: Buffer.from('x'), dataCoding: 0 })),
    );
    expect(settled.filter((r) => r.status === 'rejected')).toHaveLength(2);
  });

  it('reuses its port when started again after stop', async () => {
    const sim = await kit.simulator();
    const { port } = await sim.start();
    await sim.stop();
    expect((await sim.start()).port).toBe(port);
  });
  it('sends the receipts it owed before a restart once the same system_id binds again, texts in any script intact', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-smsc-store-'));
    kit.defer(async () => fs.rmSync(dir, { recursive: true, force: true }));
    const storeFile = path.join(dir, 'smsc-simulator', 'owed-receipts.log');
    // Stopped before the receipts fall due: only the file remembers them.
    const first = await kit.simulator({ receiptDelayMs: 1000, storeFile });
    const client = await kit.client(first);
    const texts = ['Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界 👋🏽🎉'];
    const ids: string[] = [];
    for (const text of texts) {
      const plan = planSms(text);
      ids.push(
        (await client.submit({ source: 'Hermod', destination: '+64211234567', shortMessage: plan.segments[0]!, dataCoding: plan.dataCoding })).messageId,
      );
    }
    await first.stop();
    expect(first.receiptCount).toBe(0);
    expect(fs.readFileSync(storeFile, 'utf8')).toContain('tēnā koe');

    // A new simulator (a new process, as far as it knows) on the same file.
    const second = await kit.simulator({ storeFile, port: first.port });
    const receipts: DeliveryReceipt[] = [];
    client.on('receipt', (r, settle) => {
      receipts.push(r);
      settle(true);
    });
    await eventually(() => (receipts.length === 3 ? true : undefined), 5000);
    expect(receipts.map((r) => r.carrierMessageId).sort()).toEqual([...ids].sort());
    await eventually(() => (second.receiptCount === 3 ? true : undefined), 5000);
    await second.stop();
    const third = createSmscSimulator({ storeFile, port: 0 });
    await third.start();
    kit.defer(() => third.stop());
    const late = await kit.client(third);
    const extra: DeliveryReceipt[] = [];
    late.on('receipt', (r, settle) => {
      extra.push(r);
      settle(true);
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(extra).toEqual([]);
  });

  it('sends a receipt again when no deliver_sm_resp comes in time, and not after one does', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0, requestTimeoutMs: 100, receiptRetryMs: 50 });
    const peer = await rawPeer(sim.port);
    bindAndSubmitWithReceipt(peer);
    const delivers = (): Pdu[] => peer.received.filter((p) => p.commandId === CommandId.deliver_sm);
    await eventually(() => (delivers().length === 2 ? true : undefined), 3000);
    const second = delivers()[1]!;
    peer.send({ commandId: CommandId.deliver_sm_resp, commandStatus: 0, sequenceNumber: second.sequenceNumber, messageId: '' });
    await eventually(() => (sim.receiptCount === 1 ? true : undefined), 3000);
    await new Promise((r) => setTimeout(r, 300));
    expect(delivers()).toHaveLength(2);
  });

  it('sends a receipt again on the next bind when the bind that got it dropped before answering', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0 });
    const peer = await rawPeer(sim.port);
    bindAndSubmitWithReceipt(peer);
    await eventually(() => (peer.received.some((p) => p.commandId === CommandId.deliver_sm) ? true : undefined), 3000);
    const messageId = (peer.received.find((p) => p.commandId === CommandId.submit_sm_resp) as { messageId: string }).messageId;
    peer.destroy();
    const client = await kit.client(sim, {}, false);
    const [receipt] = (await once(client, 'receipt')) as [DeliveryReceipt];
    expect(receipt.carrierMessageId).toBe(messageId);
  });
});
