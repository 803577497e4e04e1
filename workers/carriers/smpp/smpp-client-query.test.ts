import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { once, smppTestKit } from '../../simulators/smpp-test-kit';
import { planSms } from '../../../core/domain/sms-segments';
import { parseAbsoluteTime } from './absolute-time';
import { CommandId } from './command-id';
import { CommandStatus } from './command-status';
import { MessageState } from './delivery-receipt';
import type { Pdu } from './pdu';
import type { SubmitRequest } from './smpp-client';
import { SmppConnection } from './smpp-connection';
import { hermodRejection } from '../../../test/support/hermod-rejection';

const kit = smppTestKit();

function sms(source = 'Hermod'): SubmitRequest {
  const plan = planSms('kia ora');
  return { source, destination: '+64211234567', shortMessage: plan.segments[0]!, dataCoding: plan.dataCoding, esmClass: plan.esmClass };
}

const rejection = hermodRejection;

/** An SMSC that binds anyone and answers each query_sm with what `onQuery` does (nothing by default). */
async function bareSmsc(onQuery: (conn: SmppConnection, pdu: Pdu) => void = () => undefined): Promise<{ port: number; conns: SmppConnection[] }> {
  const conns: SmppConnection[] = [];
  const server = net.createServer((socket) => {
    const conn: SmppConnection = new SmppConnection(socket, {
      onPdu: (pdu) => {
        if (pdu.commandId === CommandId.bind_transceiver)
          conn.send({ commandId: CommandId.bind_transceiver_resp, commandStatus: 0, sequenceNumber: pdu.sequenceNumber, systemId: 'bare' });
        else if (pdu.commandId === CommandId.query_sm) onQuery(conn, pdu);
        else if (pdu.commandId === CommandId.unbind) conn.send({ commandId: CommandId.unbind_resp, commandStatus: 0, sequenceNumber: pdu.sequenceNumber });
      },
      onClose: () => undefined,
    });
    conns.push(conn);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  kit.defer(async () => {
    for (const c of conns) c.destroy();
    await new Promise((r) => server.close(r));
  });
  return { port: (server.address() as net.AddressInfo).port, conns };
}

/**
 * An SMSC that binds anyone and answers each submit_sm and query_sm `answerAfterMs` after it came: the most of them it
 * held unanswered at once on a bind is `mostOutstanding()`.
 */
async function countingSmsc(answerAfterMs: number): Promise<{ port: number; mostOutstanding(): number }> {
  let outstanding = 0;
  let most = 0;
  const server = net.createServer((socket) => {
    const conn: SmppConnection = new SmppConnection(socket, {
      onPdu: (pdu) => {
        if (pdu.commandId === CommandId.bind_transceiver)
          conn.send({ commandId: CommandId.bind_transceiver_resp, commandStatus: 0, sequenceNumber: pdu.sequenceNumber, systemId: 'counting' });
        else if (pdu.commandId === CommandId.unbind) conn.send({ commandId: CommandId.unbind_resp, commandStatus: 0, sequenceNumber: pdu.sequenceNumber });
        else if (pdu.commandId === CommandId.submit_sm || pdu.commandId === CommandId.query_sm) {
          most = Math.max(most, ++outstanding);
          const { sequenceNumber } = pdu;
          const answer: Pdu =
            pdu.commandId === CommandId.query_sm
              ? {
                  commandId: CommandId.query_sm_resp,
                  commandStatus: 0,
                  sequenceNumber,
                  messageId: pdu.messageId,
                  finalDate: '',
                  messageState: MessageState.ENROUTE,
                  errorCode: 0,
                }
              : { commandId: CommandId.submit_sm_resp, commandStatus: 0, sequenceNumber, messageId: `${sequenceNumber}` };
          setTimeout(() => {
            outstanding--;
            if (!conn.isClosed) conn.send(answer);
          }, answerAfterMs);
        }
      },
      onClose: () => undefined,
    });
    kit.defer(async () => conn.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  kit.defer(() => new Promise((r) => server.close(r)));
  return { port: (server.address() as net.AddressInfo).port, mostOutstanding: () => most };
}

describe('SMPP client query_sm beside submits', () => {
  it('keeps submit_sm and query_sm outstanding together within the window the SMSC allows, and answers each', async () => {
    const smsc = await countingSmsc(20);
    const client = await kit.client(smsc, { windowSize: 4 });
    const submits = Array.from({ length: 8 }, () => client.submit(sms()));
    const queries = Array.from({ length: 30 }, (_, i) => client.query({ messageId: `${i + 1}`, source: 'Hermod' }));
    expect((await Promise.all(submits)).length).toBe(8);
    expect((await Promise.all(queries)).every((a) => a.messageState === MessageState.ENROUTE)).toBe(true);
    expect(smsc.mostOutstanding()).toBe(4);
  });
});

describe('SMPP client query_sm', () => {
  it('asks what became of a message: en route before its receipt’s time, delivered with its final date after', async () => {
    const sim = await kit.simulator({ receiptDelayMs: 300 });
    const client = await kit.client(sim);
    const { messageId } = await client.submit(sms('+6421000111'));
    expect(await client.query({ messageId, source: '+6421000111' })).toEqual({ messageState: MessageState.ENROUTE, finalDate: '', errorCode: 0 });
    await new Promise((r) => setTimeout(r, 350));
    const answer = await client.query({ messageId, source: '+6421000111' });
    expect(answer).toMatchObject({ messageState: MessageState.DELIVERED, errorCode: 0 });
    expect(parseAbsoluteTime(answer.finalDate)).toBeLessThanOrEqual(Date.now());
  });

  it('rejects a query the SMSC fails (ESME_RQUERYFAIL) as it rejects a submit, with the status in its cause', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    const { messageId } = await client.submit(sms());
    const unknown = await rejection(client.query({ messageId: 'abcdef0123', source: 'Hermod' }));
    expect(unknown).toMatchObject({ code: 'carrier_rejected', retryable: false, cause: { status: CommandStatus.ESME_RQUERYFAIL } });
    const otherSource = await rejection(client.query({ messageId, source: 'Other' }));
    expect(otherSource.cause).toEqual({ status: CommandStatus.ESME_RQUERYFAIL });
  });

  it('rejects with the generic_nack’s status when the SMSC knows no query_sm (ESME_RINVCMDID)', async () => {
    const smsc = await bareSmsc((conn, pdu) =>
      conn.send({ commandId: CommandId.generic_nack, commandStatus: CommandStatus.ESME_RINVCMDID, sequenceNumber: pdu.sequenceNumber }),
    );
    const client = await kit.client(smsc);
    const err = await rejection(client.query({ messageId: '1', source: 'Hermod' }));
    expect(err).toMatchObject({ code: 'carrier_rejected', cause: { status: CommandStatus.ESME_RINVCMDID } });
  });

  it('rejects retryably when no answer comes within the submit timeout, and when the connection is lost first', async () => {
    const smsc = await bareSmsc();
    const client = await kit.client(smsc, { submitTimeoutMs: 100 });
    const started = Date.now();
    expect(await rejection(client.query({ messageId: '1', source: 'Hermod' }))).toMatchObject({ code: 'timeout', retryable: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);

    const slow = await kit.client(smsc, { submitTimeoutMs: 10_000 });
    const pending = rejection(slow.query({ messageId: '1', source: 'Hermod' }));
    await new Promise((r) => setTimeout(r, 50));
    for (const c of smsc.conns) c.destroy();
    expect(await pending).toMatchObject({ code: 'carrier_transient', retryable: true });
  });

  it('rejects at once on a receiver bind, an unbound client and a closed one', async () => {
    const sim = await kit.simulator();
    const receiver = await kit.client(sim, { bindAs: 'receiver' });
    expect(await rejection(receiver.query({ messageId: '1', source: 'Hermod' }))).toMatchObject({ code: 'internal' });
    sim.refuse(true);
    const unbound = await kit.client(sim, {}, false);
    expect(await rejection(unbound.query({ messageId: '1', source: 'Hermod' }))).toMatchObject({ code: 'unavailable', retryable: true });
    sim.refuse(false);
    const closed = await kit.client(sim);
    await closed.close(100);
    expect(await rejection(closed.query({ messageId: '1', source: 'Hermod' }))).toMatchObject({ code: 'unavailable', retryable: true });
  });

  it('refuses a message id or source SMPP cannot carry without sending anything', async () => {
    const sim = await kit.simulator();
    const client = await kit.client(sim);
    expect(await rejection(client.query({ messageId: 'x'.repeat(65), source: 'Hermod' }))).toMatchObject({ code: 'invalid_attrib' });
    expect(await rejection(client.query({ messageId: '', source: 'Hermod' }))).toMatchObject({ code: 'invalid_attrib' });
  });
});
