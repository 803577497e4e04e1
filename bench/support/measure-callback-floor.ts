import http from 'node:http';
import type { CallbackReceiver } from './callback-receiver';
import { paced } from './paced';
import { sleep } from './sleep';
import { spread, type Spread } from './spread';

/** The offered load: messages/s, measured and warm-up seconds, keep-alive sockets. */
export interface CallbackLoad {
  rate: number;
  duration: number;
  warmup: number;
  connections: number;
}

export interface FloorFigures {
  oneWay: Spread;
  roundTrip: Spread;
  seconds: number;
  errors: number;
}

/** The floor: one bare HTTP hop from this process to the same receiver, at the same rate. */
export async function measureCallbackFloor(
  receiver: CallbackReceiver,
  track: { onFloor?: (seq: string, at: number) => void },
  sampleBody: string,
  load: CallbackLoad,
): Promise<FloorFigures> {
  const { rate, duration, warmup, connections } = load;
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const startedAt = new Map<string, number>();
  const oneWay: number[] = [];
  const roundTrip: number[] = [];
  let errors = 0;
  let inFlight = 0;
  track.onFloor = (seq, at) => {
    const t0 = startedAt.get(seq);
    if (t0 !== undefined && !seq.startsWith('-')) oneWay.push(at - t0);
  };
  const fire = (i: number): void => {
    const seq = String(i);
    const t0 = performance.now();
    startedAt.set(seq, t0);
    inFlight++;
    const req = http.request(
      {
        host: '127.0.0.1',
        port: receiver.port,
        path: '/floor',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(sampleBody), 'x-bench-seq': seq },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          inFlight--;
          if (i >= 0) roundTrip.push(performance.now() - t0);
        });
      },
    );
    req.on('error', () => {
      inFlight--;
      errors++;
    });
    req.end(sampleBody);
  };
  await paced(rate, warmup, (i) => fire(-1 - i));
  const run = await paced(rate, duration, fire);
  const deadline = performance.now() + 10_000;
  while (inFlight > 0 && performance.now() < deadline) await sleep(20);
  agent.destroy();
  return { oneWay: spread(oneWay), roundTrip: spread(roundTrip), seconds: run.seconds, errors };
}
