import { MessageChannel, Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { describeBusContract } from './bus-contract';
import { describeStateContract } from './state-contract';
import { createMemoryBus } from './memory-bus';
import { createMemoryState } from './memory-state';
import { connectBusAndState } from './thread-bridge-client';
import { serveBusAndState } from './thread-bridge-host';
import { eventually } from '../../test/support/eventually';

/** A bus and state owned on one side of a MessageChannel and used from the other, as core's channel-pool thread uses core's. */
function bridged() {
  const bus = createMemoryBus({ partitions: 8, retryDelayMs: 5 });
  const state = createMemoryState();
  const { port1, port2 } = new MessageChannel();
  const host = serveBusAndState(port1, bus, state);
  const client = connectBusAndState(port2);
  const close = async () => {
    await client.close();
    await host.close();
    await bus.close();
    await state.close();
  };
  return { bus, state, client, host, close };
}

describeBusContract('across a thread bridge', () => {
  const b = bridged();
  return { ...b.client.bus, close: b.close };
});

describeStateContract('across a thread bridge', () => {
  const b = bridged();
  return { ...b.client.state, close: b.close };
});

describe('thread bridge', () => {
  it('carries Māori, emoji and CJK bytes through publish and delivery unchanged', async () => {
    const b = bridged();
    const text = 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好';
    const seen: string[] = [];
    await b.client.bus.subscribe(
      't',
      async (records) => void seen.push(...records.map((r) => (Buffer.isBuffer(r.value) ? r.value.toString('utf8') : 'not a Buffer'))),
      { group: 'g' },
    );
    await b.client.bus.publish('t', [{ key: '+6421555123', value: Buffer.from(text) }]);
    await eventually(() => seen.length === 1);
    expect(seen).toEqual([text]);
    await b.close();
  });

  it('hands a batch the other thread failed back to the bus, which delivers it again', async () => {
    const b = bridged();
    let tries = 0;
    await b.client.bus.subscribe(
      't',
      async () => {
        tries++;
        if (tries === 1) throw new Error('carrier down');
      },
      { group: 'g' },
    );
    await b.bus.publish('t', [{ key: 'k', value: Buffer.from('once') }]);
    await eventually(() => tries === 2);
    expect(await b.bus.lag('t', 'g')).toBe(0);
    await b.close();
  });

  it('keeps a batch owed when its thread stops before settling it, and hands it to the next subscriber', async () => {
    const b = bridged();
    let held = 0;
    await b.client.bus.subscribe('t', () => new Promise<void>(() => void held++), { group: 'g' });
    await b.bus.publish('t', [{ key: 'k', value: Buffer.from('owed') }]);
    await eventually(() => held === 1);
    await b.host.close();
    const again: string[] = [];
    await b.bus.subscribe('t', async (records) => void again.push(...records.map((r) => r.value.toString())), { group: 'g' });
    await eventually(() => again.length === 1, 10_000);
    expect(again).toEqual(['owed']);
    await b.bus.close();
    await b.state.close();
  });

  it('runs hot-state calls made from a real worker thread against the owner’s state', async () => {
    const state = createMemoryState();
    const bus = createMemoryBus();
    const { port1, port2 } = new MessageChannel();
    const host = serveBusAndState(port1, bus, state);
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       let id = 0;
       workerData.port.on('message', (m) => { parentPort.postMessage(m); workerData.port.close(); });
       workerData.port.postMessage({ t: 'state', id: ++id, method: 'putCarrierIds', args: [[{ carrierId: 'C-1', messageId: 'm-ā' }]] });`,
      { eval: true, workerData: { port: port2 }, transferList: [port2] },
    );
    const answer = await new Promise((resolve) => worker.once('message', resolve));
    expect(answer).toMatchObject({ t: 'result', id: 1 });
    expect(await state.getMessageIdByCarrierId('C-1')).toBe('m-ā');
    await worker.terminate();
    await host.close();
    await bus.close();
    await state.close();
  });
});
