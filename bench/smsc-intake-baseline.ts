/**
 * The ceiling for campaign fan-out: how fast the SMSC simulator itself takes
 * raw submit_sm. A fresh simulator runs in this process (as it does in the
 * campaign bench) and a forked child blasts submit_sm at it with the project's
 * SMPP client over one or more binds with a large window, so the client's CPU
 * is not charged to the simulator's thread, as with hermod's SMS worker.
 * Every submit asks for a receipt, so the simulator does the same work per
 * message as during a campaign.
 *
 *   npx tsx bench/smsc-intake-baseline.ts      # on its own: prints submits/s
 *
 * Knobs: BENCH_SMSC_SUBMITS (200000), BENCH_SMSC_BINDS (1), BENCH_SMSC_WINDOW (1024).
 */
import { fork } from 'node:child_process';
import type { Logger } from '../lib/log';
import { createSmppClient, type SmppClient } from '../workers/carriers/smpp/smpp-client';
import { createSmscSimulator } from '../workers/simulators/smsc-simulator';

export interface IntakeOptions {
  submits: number;
  binds: number;
  window: number;
  receiptDelayMs?: number;
}

export interface IntakeFigures extends IntakeOptions {
  /** From the first submit_sm sent to the last submit_sm_resp received (measured by the sender). */
  seconds: number;
  rate: number;
  /** Submits the simulator counted, and the ones the client saw fail. */
  received: number;
  failed: number;
}

interface BlastDone {
  seconds: number;
  ok: number;
  failed: number;
}

/** Starts a fresh simulator, has a child process blast `submits` submit_sm at it, and reports the rate. */
export async function measureSmscIntake(options: IntakeOptions): Promise<IntakeFigures> {
  const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: options.receiptDelayMs ?? 20 });
  const { port } = await simulator.start();
  const child = fork(import.meta.filename, ['blast', String(port), String(options.submits), String(options.binds), String(options.window)], {
    execArgv: ['--import', 'tsx'],
  });
  try {
    const done = await new Promise<BlastDone>((resolve, reject) => {
      child.once('message', (m: BlastDone) => resolve(m));
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`SMPP blaster exited with ${code} before reporting`)));
    });
    return { ...options, seconds: done.seconds, rate: done.ok / done.seconds, received: simulator.submitCount, failed: done.failed };
  } finally {
    child.kill();
    await simulator.stop();
  }
}

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet };
const TEXT = Buffer.from('Hi Aroha, your appointment is tomorrow at 10', 'latin1');

/** Keeps up to `inFlight` submits pending on one client until `count` are answered. */
function blastOne(client: SmppClient, first: number, count: number, inFlight: number, tally: { ok: number; failed: number }): Promise<void> {
  return new Promise((resolve) => {
    let next = 0;
    let pending = 0;
    const pump = (): void => {
      while (pending < inFlight && next < count) {
        const i = first + next++;
        pending++;
        client
          .submit({ source: 'hermod', destination: `+6421${String(i % 10_000_000).padStart(7, '0')}`, shortMessage: TEXT, dataCoding: 0 })
          .then(
            () => tally.ok++,
            () => tally.failed++,
          )
          .finally(() => {
            pending--;
            if (next >= count && pending === 0) resolve();
            else pump();
          });
      }
    };
    pump();
  });
}

async function blast(port: number, submits: number, binds: number, window: number): Promise<BlastDone> {
  const clients = Array.from({ length: binds }, () =>
    createSmppClient({ host: '127.0.0.1', port, systemId: 'bench', password: 'bench', windowSize: window, enquireLinkMs: 0, log: quiet }),
  );
  await Promise.all(clients.map((c) => c.ready()));
  const tally = { ok: 0, failed: 0 };
  const per = Math.ceil(submits / binds);
  const started = performance.now();
  await Promise.all(clients.map((c, b) => blastOne(c, b * per, Math.max(0, Math.min(per, submits - b * per)), window * 2, tally)));
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(clients.map((c) => c.close(1000)));
  return { seconds, ...tally };
}

if (process.argv[1] === import.meta.filename) {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'blast') {
    const [port, submits, binds, window] = args.map(Number) as [number, number, number, number];
    blast(port, submits, binds, window).then(
      (done) => process.send!(done, () => process.exit(0)),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  } else {
    const options = {
      submits: Number(process.env.BENCH_SMSC_SUBMITS ?? 200_000),
      binds: Number(process.env.BENCH_SMSC_BINDS ?? 1),
      window: Number(process.env.BENCH_SMSC_WINDOW ?? 1024),
    };
    measureSmscIntake(options).then(
      (f) =>
        console.log(
          `SMSC simulator intake: ${f.submits} submit_sm over ${f.binds} bind(s), window ${f.window}: ${f.seconds.toFixed(2)} s, ${Math.round(f.rate)} submits/s (simulator counted ${f.received}, failed ${f.failed})`,
        ),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  }
}
