import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HermodError } from '../../../lib/errors';
import { SubmitWindow, type SubmitJob } from './submit-window';

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

/** A TCP connection whose far end answers each write at once, and then holds this whole process for `stallMs` (a CPU-starved core). */
async function stallingPeer(stallMs: number): Promise<net.Socket> {
  const server = net.createServer((socket) => {
    socket.on('data', () => {
      socket.write('answer');
      const until = performance.now() + stallMs;
      while (performance.now() < until);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  cleanup.push(() => {
    client.destroy();
    server.close();
  });
  return client;
}

describe('a submit window in a process that was stalled', () => {
  it('reads the answers that came meanwhile before it gives up on a request whose time ran out during the stall', async () => {
    const peer = await stallingPeer(300);
    const window = new SubmitWindow<SubmitJob<string>>(
      4,
      100,
      () => {
        peer.write('submit');
        return 1;
      },
      () => new HermodError('timeout', 'no answer in time', { retryable: true }),
    );
    peer.on('data', () => window.take(1)?.resolve('answered'));
    const outcome = new Promise<string>((resolve, reject) => window.add({ resolve, reject, deadline: 0 }));
    expect(await outcome.catch((err: Error) => err.message)).toBe('answered');
  });
});

describe('a submit window whose request is never answered', () => {
  it('says so once it gives the request up, so its client may stop reading for receipts now that nothing is on the wire', async () => {
    let givenUp = 0;
    const window = new SubmitWindow<SubmitJob<string>>(
      4,
      30,
      () => 1,
      () => new HermodError('timeout', 'no answer in time', { retryable: true }),
      60,
      () => undefined,
      () => givenUp++,
    );
    const outcome = new Promise<string>((resolve, reject) => window.add({ resolve, reject, deadline: 0 }));
    expect(await outcome.catch((err: Error) => err.message)).toBe('no answer in time');
    expect(givenUp).toBe(1);
    expect(window.unanswered).toBe(0);
  });
});
