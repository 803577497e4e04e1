/**
 * Delivery report → callback benchmark (DESIGN.md §5: p99 ≤ 250 ms at
 * 1,000/s). Starts hermod with a fresh data directory, the SMSC simulator and
 * a plain node:http callback receiver in this process, sets acme's status
 * callback to the receiver, then sends v2 messages at a paced open-model rate
 * and measures, per message, the time from the simulator writing its delivery
 * receipt (deliver_sm) to the receiver having the `received` callback for
 * that message. Both instants are taken on this process's clock. Once hermod
 * has stopped, the floor is measured against the same receiver at the same
 * rate: a bare node:http POST from this process, send → body at the receiver.
 *
 *   npm run bench:callbacks
 *   BENCH_RATE=500 BENCH_DURATION=10 npm run bench:callbacks
 *
 * Each message carries a unique token in its content and its reference: the
 * simulator's `message` event maps the token to the carrier message id, its
 * `receipt` event gives the receipt's time, and the callback body's
 * `reference` names the token (its `id` is checked against the 202 answer).
 *
 * For context it also prints, per message, POST → 202, POST → submit_sm at
 * the simulator and POST → the first callback of each status; the CPU used
 * by each hermod role, by this process and by the rest of the machine; the
 * TCP connections hermod opened to the receiver; and this process's
 * event-loop delay (it bounds how late this process can see either instant).
 * hermod's output is kept in <data dir>/hermod-output.log.
 *
 * Knobs: BENCH_RATE messages/s (1000), BENCH_DURATION seconds (20),
 * BENCH_WARMUP seconds at the same rate, not measured (2), BENCH_CONNECTIONS
 * keep-alive sockets to hermod (256), BENCH_RECEIPT_DELAY_MS of the simulator
 * (20), BENCH_DRAIN seconds to wait for late callbacks (30), HERMOD_GATEWAYS (1).
 */
import os from 'node:os';
import { startCallbackReceiver } from './support/callback-receiver';
import { formatMs } from './support/format-ms';
import { measureCallbackFloor } from './support/measure-callback-floor';
import { measureHermodCallbacks } from './support/measure-hermod-callbacks';
import { printTable } from './support/print-table';
import type { Spread } from './support/spread';

const rate = Number(process.env.BENCH_RATE ?? 1000);
const duration = Number(process.env.BENCH_DURATION ?? 20);
const warmup = Number(process.env.BENCH_WARMUP ?? 2);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 256);
const receiptDelayMs = Number(process.env.BENCH_RECEIPT_DELAY_MS ?? 20);
const drainS = Number(process.env.BENCH_DRAIN ?? 30);
const gateways = process.env.HERMOD_GATEWAYS ?? '1';
const knobs = { rate, duration, warmup, connections, receiptDelayMs, drainS, gateways };
const TARGET_P99_MS = 250;

async function main(): Promise<void> {
  const track: { onCallback?: (body: string, at: number) => void; onFloor?: (seq: string, at: number) => void } = {};
  const receiver = await startCallbackReceiver((urlPath, body, at, headers) => {
    if (urlPath === '/floor') return track.onFloor?.(String(headers['x-bench-seq']), at);
    if (urlPath !== '/status') return;
    const status = /"status":"([a-z_]+)"/.exec(body)?.[1] ?? '?';
    receiver.statuses.set(status, (receiver.statuses.get(status) ?? 0) + 1);
    track.onCallback?.(body, at);
  });
  let failed = false;
  try {
    const h = await measureHermodCallbacks(receiver, track, knobs);
    const sampleBody = JSON.stringify({
      id: '2b1e6f0e-7d1c-4b5e-9a51-3f1f7a8c9d10',
      message_id: '2b1e6f0e-7d1c-4b5e-9a51-3f1f7a8c9d10',
      status: 'received',
      detail: '+64210000001',
      reference: 'cb-xxxxxxxx-12345',
    });
    const f = await measureCallbackFloor(receiver, track, sampleBody, knobs);

    const sendRate = h.fired / h.firedSeconds;
    const acceptedRate = h.accepted / Math.max(h.firedSeconds, h.acceptSeconds);
    const lost = h.missing.noCarrierMessage + h.missing.noReceipt + h.missing.noCallback;
    const met = h.latency.p99 <= TARGET_P99_MS && acceptedRate >= 0.95 * 1000 && lost === 0 && h.latency.count > 0;
    console.log(
      `\ndelivery report → callback, ${rate}/s offered for ${duration} s (after ${warmup} s warm-up), ${os.availableParallelism()} cores, node ${process.version}, HERMOD_GATEWAYS=${gateways}, simulator receipts after ${receiptDelayMs} ms\n`,
    );
    const row = (what: string, s: Spread): string[] => [what, String(s.count), formatMs(s.p50), formatMs(s.p90), formatMs(s.p99), formatMs(s.max)];
    printTable(
      [{ title: 'what' }, ...['count', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'].map((title) => ({ title, align: 'right' as const }))],
      [
        row('hermod: receipt deliver_sm written → `received` callback at the receiver', h.latency),
        row('baseline: bare node:http POST → body at the same receiver', f.oneWay),
        row('baseline: bare node:http POST, round trip', f.roundTrip),
        row('hermod: POST /rest/sms/v2/messages → 202 (for context)', h.sendLatency),
        row('hermod: POST sent → submit_sm at the simulator (for context)', h.submitLatency),
        ...h.byStatus.map((b) => row(`hermod: POST sent → \`${b.status}\` callback at the receiver (for context)`, b.spread)),
      ],
    );
    console.log(
      `\noffered ${h.fired} sends in ${h.firedSeconds.toFixed(2)} s (${Math.round(sendRate)}/s); 202 accepted ${h.accepted}, the last ${h.acceptSeconds.toFixed(2)} s after the first send (${Math.round(acceptedRate)}/s achieved), other answers ${h.refused}, errors ${h.errors}`,
    );
    console.log(
      `measured messages without a carrier message ${h.missing.noCarrierMessage}, without a receipt ${h.missing.noReceipt}, without a received callback after ${drainS} s ${h.missing.noCallback}; callback id ≠ 202 id: ${h.idMismatches}`,
    );
    console.log(`status callbacks at the receiver (warm-up included): ${JSON.stringify(Object.fromEntries(h.callbacks))}`);
    console.log(
      `during the measured run and its drain hermod made ${h.callbacksInRun} callbacks over ${h.callbackConnections} new TCP connections to the receiver`,
    );
    console.log(
      `this process's event-loop delay during the measured run (both timestamps are taken here): p99 ${formatMs(h.loopDelayP99)} ms, max ${formatMs(h.loopDelayMax)} ms`,
    );
    console.log(`CPU during the measured run and its drain, % of one core: ${h.cpu.map((c) => `${c.label} ${Math.round(c.percent)}`).join('; ')}`);
    console.log(`hermod's output: ${h.logFile}`);
    console.log(`floor run: ${Math.round((rate * duration) / f.seconds)}/s offered, errors ${f.errors}`);
    console.log(`hermod p99 / floor p99 (one way): ${(h.latency.p99 / f.oneWay.p99).toFixed(1)}`);
    console.log(`DESIGN.md §5 target, p99 ≤ ${TARGET_P99_MS} ms at 1,000/s: ${met ? 'met' : 'not met'}${rate < 1000 ? ' (offered rate below 1,000/s)' : ''}`);
    if (lost > 0 || h.errors > 0 || h.refused > 0) failed = true;
  } finally {
    receiver.close();
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
