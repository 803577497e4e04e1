import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseAbsoluteTime } from '../carriers/smpp/absolute-time';
import { CommandId } from '../carriers/smpp/command-id';
import { CommandStatus } from '../carriers/smpp/command-status';
import { MessageState } from '../carriers/smpp/delivery-receipt';
import { FrameDecoder } from '../carriers/smpp/frame-decoder';
import { decodePdu, writePdu, type Pdu, type QuerySmRespPdu, type SmRespPdu } from '../carriers/smpp/pdu';
import { PduWriter } from '../carriers/smpp/pdu-writer';
import { eventually } from '../../test/support/eventually';
import { once, smppTestKit } from './smpp-test-kit';
import type { SmscSimulator } from './smsc-simulator';

const kit = smppTestKit();

/** An ESME over raw PDUs that submits, answers receipts, and asks with query_sm. */
async function esme(sim: SmscSimulator, bindAs: 'bind_transceiver' | 'bind_receiver' = 'bind_transceiver', systemId = 'hermod') {
  const socket = net.connect({ host: '127.0.0.1', port: sim.port });
  await once(socket, 'connect');
  kit.defer(async () => socket.destroy());
  const decoder = new FrameDecoder();
  const waiting = new Map<number, (pdu: Pdu) => void>();
  const receipts: string[] = [];
  let seq = 0;
  const send = (pdu: Pdu): void => {
    const w = new PduWriter();
    writePdu(w, pdu);
    socket.write(w.take());
  };
  socket.on('data', (chunk: Buffer) =>
    decoder.push(chunk, (f) => {
      const pdu = decodePdu(f);
      if (pdu.commandId === CommandId.deliver_sm) {
        receipts.push(pdu.shortMessage.toString('latin1'));
        send({ commandId: CommandId.deliver_sm_resp, commandStatus: 0, sequenceNumber: pdu.sequenceNumber, messageId: '' });
      } else waiting.get(pdu.sequenceNumber)?.(pdu);
    }),
  );
  const request = <T extends Pdu>(pdu: Pdu): Promise<T> =>
    new Promise((resolve) => {
      pdu.sequenceNumber = ++seq;
      waiting.set(pdu.sequenceNumber, resolve as (p: Pdu) => void);
      send(pdu);
    });
  await request({ commandId: CommandId[bindAs], commandStatus: 0, sequenceNumber: 0, systemId, password: 'pw', systemType: '' });
  return {
    receipts,
    async submit(source = 'Hermod', registeredDelivery = 1): Promise<string> {
      const resp = await request<SmRespPdu>({
        commandId: CommandId.submit_sm,
        commandStatus: 0,
        sequenceNumber: 0,
        sourceAddr: source,
        destinationAddr: '64211234567',
        esmClass: 0,
        registeredDelivery,
        dataCoding: 0,
        shortMessage: Buffer.from('hi'),
      });
      expect(resp.commandStatus).toBe(0);
      return resp.messageId;
    },
    query: (messageId: string, sourceAddr = 'Hermod') =>
      request<QuerySmRespPdu>({
        commandId: CommandId.query_sm,
        commandStatus: 0,
        sequenceNumber: 0,
        messageId,
        sourceAddrTon: 5,
        sourceAddrNpi: 0,
        sourceAddr,
      }),
  };
}

describe('SMSC simulator query_sm', () => {
  it('answers ENROUTE before the receipt’s time, and DELIVERED with its final date after, also once the receipt was answered', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 300 });
    const peer = await esme(sim);
    const before = Date.now();
    const id = await peer.submit();
    expect(await peer.query(id)).toMatchObject({ commandStatus: 0, messageId: id, finalDate: '', messageState: MessageState.ENROUTE, errorCode: 0 });
    await eventually(() => (sim.receiptCount === 1 ? true : undefined));
    const after = await peer.query(id);
    expect(after).toMatchObject({ commandStatus: 0, messageId: id, messageState: MessageState.DELIVERED, errorCode: 0 });
    const finalAt = parseAbsoluteTime(after.finalDate)!;
    expect(finalAt).toBeGreaterThanOrEqual(before + 300 - 100);
    expect(finalAt).toBeLessThanOrEqual(Date.now());
  });

  it('answers a submit that asked for no receipt too, once its time has come', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 20 });
    const peer = await esme(sim);
    const id = await peer.submit('Hermod', 0);
    await new Promise((r) => setTimeout(r, 40));
    expect(await peer.query(id)).toMatchObject({ commandStatus: 0, messageState: MessageState.DELIVERED });
    expect(peer.receipts).toEqual([]);
  });

  it('answers an undeliverable message UNDELIVERABLE with the error code its receipt carries, an expired one EXPIRED', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0, outcomes: { undeliverable: 1 } });
    const peer = await esme(sim);
    const id = await peer.submit();
    await eventually(() => (peer.receipts.length === 1 ? true : undefined));
    expect(peer.receipts[0]).toMatch(/stat:UNDELIV err:001/);
    expect(await peer.query(id)).toMatchObject({ commandStatus: 0, messageState: MessageState.UNDELIVERABLE, errorCode: 1 });

    const expiring = await kit.simulator({ receiptDelayMs: 0, outcomes: { expired: 1 } });
    const other = await esme(expiring);
    const expired = await other.submit();
    await eventually(() => (other.receipts.length === 1 ? true : undefined));
    expect(await other.query(expired)).toMatchObject({ commandStatus: 0, messageState: MessageState.EXPIRED, errorCode: 27 });
  });

  it('fails the query (ESME_RQUERYFAIL, no body) for an unknown id or another source; an empty source matches', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0 });
    const peer = await esme(sim);
    const id = await peer.submit();
    expect(await peer.query('ffffffffffff')).toMatchObject({ commandStatus: CommandStatus.ESME_RQUERYFAIL, messageId: '', finalDate: '' });
    expect(await peer.query('not-an-id')).toMatchObject({ commandStatus: CommandStatus.ESME_RQUERYFAIL });
    expect(await peer.query(id, 'Other')).toMatchObject({ commandStatus: CommandStatus.ESME_RQUERYFAIL });
    expect(await peer.query(id, '')).toMatchObject({ commandStatus: 0 });
  });

  it('finds an id as submit_sm_resp wrote it, as its receipt wrote it, and in any case and padding', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0, submitIds: 'hex', receiptIds: 'decimal', idStyles: { submit: { upper: true, width: 16 } } });
    const peer = await esme(sim);
    const id = await peer.submit();
    await eventually(() => (peer.receipts.length === 1 ? true : undefined));
    const receiptId = /id:(\d+)/.exec(peer.receipts[0]!)![1]!;
    expect(receiptId).toBe(BigInt(`0x${id}`).toString(10));
    for (const asked of [id, id.toLowerCase(), id.replace(/^0+/, ''), receiptId]) expect((await peer.query(asked)).messageState).toBe(MessageState.DELIVERED);
  });

  it('remembers at most queryableMessages, forgetting the oldest first', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0, queryableMessages: 2 });
    const peer = await esme(sim);
    const ids = [await peer.submit(), await peer.submit(), await peer.submit()];
    expect((await peer.query(ids[0]!)).commandStatus).toBe(CommandStatus.ESME_RQUERYFAIL);
    expect((await peer.query(ids[1]!)).commandStatus).toBe(0);
    expect((await peer.query(ids[2]!)).commandStatus).toBe(0);
  });

  it('answers a receiver bind ESME_RINVBNDSTS, as for a submit', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 0 });
    const submitter = await esme(sim);
    const id = await submitter.submit();
    const receiver = await esme(sim, 'bind_receiver');
    expect((await receiver.query(id)).commandStatus).toBe(CommandStatus.ESME_RINVBNDSTS);
  });
});
