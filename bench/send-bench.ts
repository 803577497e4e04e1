/**
 * Send-acceptance benchmark: POST /rest/sms/v2/messages against hermod, and in
 * the same run the same request against a bare node:http (and node:https)
 * server on this machine as the ceiling. Prints requests/s, p50 and p99 of each
 * and hermod's ratio to the ceilings.
 *
 *   npm run bench                      # starts hermod itself with a fresh data dir
 *   BENCH_URL=https://host:8443 BENCH_USER=app BENCH_PASS=pw npm run bench   # a running service
 *
 * Knobs: BENCH_CONNECTIONS (64), BENCH_DURATION seconds (10), BENCH_WARMUP seconds (3),
 * HERMOD_GATEWAYS (gateway processes of the started service), BENCH_NO_CARRIER=1 (no
 * SMSC: measures acceptance alone, messages wait for the carrier), BENCH_KEYED=1 (a second hermod
 * row, each request with an Idempotency-Key of its own: the claim, the answer kept and the
 * lookup of a keyed message's id in history).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startHermod, type HermodProcess } from '../test/support/hermod-process';
import { printTable } from './support/print-table';
import { startBaselineServer } from './support/start-baseline-server';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const duration = Number(process.env.BENCH_DURATION ?? 10);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const BODY = JSON.stringify({ destination: '+6421000001', content: 'Your code is 123456' });

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

let keys = 0;
/** Gives each request an Idempotency-Key no other request had. */
const withKey = (req: autocannon.Request): autocannon.Request => ({ ...req, headers: { ...req.headers, 'idempotency-key': `bench-${process.pid}-${++keys}` } });

async function measure(name: string, url: string, headers: Record<string, string>, keyed = false): Promise<Figures> {
  const opts = {
    url,
    method: 'POST' as const,
    body: BODY,
    headers: { 'content-type': 'application/json', ...headers },
    connections,
    pipelining: 1,
    ...(keyed ? { requests: [{ setupRequest: withKey }] } : {}),
  };
  if (warmup > 0) await autocannon({ ...opts, duration: warmup });
  const r = await autocannon({ ...opts, duration });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts };
}

async function main(): Promise<void> {
  let hermod: HermodProcess | undefined;
  let url = process.env.BENCH_URL;
  const user = process.env.BENCH_USER ?? 'bench';
  const pass = process.env.BENCH_PASS ?? 'bench-secret';
  let dataDir = '';
  if (!url) {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-bench-'));
    hermod = await startHermod({
      dataDir,
      env: {
        HERMOD_BOOTSTRAP_APP: user,
        HERMOD_BOOTSTRAP_PASSWORD: pass,
        ...(process.env.BENCH_NO_CARRIER ? { HERMOD_SMSC_SIMULATOR: 'false', HERMOD_SMPP_PORT: '1' } : {}),
        ...(process.env.HERMOD_GATEWAYS ? { HERMOD_GATEWAYS: process.env.HERMOD_GATEWAYS } : {}),
      },
    });
    url = hermod.baseUrl;
  }
  const auth = { authorization: 'Basic ' + Buffer.from(`${user}:${pass}`).toString('base64') };

  const results: Figures[] = [];
  results.push(await measure('hermod POST /rest/sms/v2/messages (HTTPS, auth, validation, persisted)', `${url}/rest/sms/v2/messages`, auth));
  const keyed = process.env.BENCH_KEYED
    ? await measure('hermod, each request with its own Idempotency-Key', `${url}/rest/sms/v2/messages`, auth, true)
    : undefined;
  if (hermod) await hermod.stop();

  const plain = await startBaselineServer('http');
  results.push(await measure('baseline: bare node:http, canned 202', `${plain.url}/rest/sms/v2/messages`, auth));
  await plain.stop();
  if (dataDir) {
    const tls = await startBaselineServer('https', { cert: path.join(dataDir, 'tls/self-signed.crt'), key: path.join(dataDir, 'tls/self-signed.key') });
    results.push(await measure('baseline: bare node:https, canned 202', `${tls.url}/rest/sms/v2/messages`, auth));
    await tls.stop();
  }

  const [h, ...baselines] = results;
  if (keyed) results.splice(1, 0, keyed);
  console.log(`\nsend acceptance, ${connections} connections, ${duration}s each, ${os.availableParallelism()} cores, node ${process.version}\n`);
  printTable(
    [{ title: 'what' }, ...['requests/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors'].map((title) => ({ title, align: 'right' as const }))],
    results.map((f) => [f.name, Math.round(f.rps), f.p50, f.p99, f.non2xx, f.errors]),
  );
  for (const b of baselines) console.log(`\nhermod / ${b.name.replace('baseline: ', '')}: ${(h!.rps / b.rps).toFixed(2)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
