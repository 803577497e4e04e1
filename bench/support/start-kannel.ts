import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { freePort } from '../../test/support/free-port';
import { kannelConfig } from './kannel-config';
import { sleep } from './sleep';

const BEARERBOX = '/usr/sbin/bearerbox';
const SMSBOX = '/usr/sbin/smsbox';
/** kannel-extras ships the fake SMSC with the other test programs. */
const FAKESMSC = '/usr/lib/kannel/test/fakesmsc';

export interface KannelStatus {
  /** MT messages bearerbox handed to the fake SMSC link. */
  sent: number;
  /** MT messages queued for the fake SMSC link. */
  queued: number;
  /** MT messages bearerbox took from smsbox and has not yet routed to a link (its global outgoing queue). */
  waiting: number;
  smscOnline: boolean;
  smsboxConnected: boolean;
}

export interface Kannel {
  /** sendsms URL for one message: `text` and `to` URL-encoded, UTF-8 text sent as UCS-2. */
  sendsmsUrl(to: string, text: string): string;
  status(): Promise<KannelStatus>;
  /** Stops fakesmsc (SIGINT) and resolves with the count of messages it received, from its own summary. */
  stopFakesmsc(): Promise<number>;
  /** Stops smsbox and bearerbox (and fakesmsc if still running). */
  stop(): Promise<void>;
}

interface Proc {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
}

function run(file: string, args: string[], dir: string, name: string): Proc {
  const child = spawn(file, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = fs.createWriteStream(path.join(dir, `${name}.out`));
  let output = '';
  const take = (c: Buffer): void => {
    output += c.toString();
    log.write(c);
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function stopProc(p: Proc | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill(signal);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
  await p.exited;
  clearTimeout(timer);
}

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number, context: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`Kannel: ${what} not within ${timeoutMs / 1000} s\n${context()}`);
    await sleep(200);
  }
}

/**
 * Starts Debian's Kannel as a test bed: bearerbox with a fake SMSC link,
 * fakesmsc connected to it (sending nothing, counting what it gets), and
 * smsbox with the sendsms interface; free ports, config and logs in `dir`.
 */
export async function startKannel(o: { dir: string; user: string; password: string }): Promise<Kannel> {
  for (const f of [BEARERBOX, SMSBOX, FAKESMSC]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: are kannel and kannel-extras installed?`);
  const ports = { admin: await freePort(), smsbox: await freePort(), fake: await freePort(), sendsms: await freePort() };
  const adminPassword = 'bench-admin';
  const conf = path.join(o.dir, 'kannel.conf');
  fs.writeFileSync(conf, kannelConfig({ dir: o.dir, ports, adminPassword, user: o.user, password: o.password }));

  const statusUrl = `http://127.0.0.1:${ports.admin}/status.txt?password=${adminPassword}`;
  const status = async (): Promise<KannelStatus> => {
    const { body } = await get(statusUrl);
    const fake = /^\s*fake\[fake\].*$/m.exec(body)?.[0] ?? '';
    return {
      sent: Number(/sent: sms (\d+)/.exec(fake)?.[1] ?? Number.NaN),
      queued: Number(/queued (\d+) msgs/.exec(fake)?.[1] ?? Number.NaN),
      waiting: Number(/^SMS: received \d+ \(\d+ queued\), sent \d+ \((\d+) queued\)/m.exec(body)?.[1] ?? Number.NaN),
      smscOnline: /\(online \d/.test(fake),
      smsboxConnected: /^\s*smsbox:/m.test(body),
    };
  };

  const procs: { bearerbox?: Proc; fakesmsc?: Proc; smsbox?: Proc } = {};
  const context = (): string =>
    Object.entries(procs)
      .map(([n, p]) => `--- ${n}:\n${p?.output().slice(-2000) ?? ''}`)
      .join('\n');
  const stop = async (): Promise<void> => {
    await stopProc(procs.fakesmsc, 'SIGINT');
    await stopProc(procs.smsbox, 'SIGTERM');
    await stopProc(procs.bearerbox, 'SIGTERM');
  };
  try {
    // Warnings and worse on stderr; the config sends the same to the log files.
    procs.bearerbox = run(BEARERBOX, ['-v', '2', conf], o.dir, 'bearerbox');
    await until('bearerbox admin port', async () => ((await get(statusUrl)).status === 200 ? true : undefined), 30_000, context);
    // fakesmsc fails at once if bearerbox's fake link does not listen yet: try again until the link is online.
    await until(
      'fake SMSC link online',
      async () => {
        if (!procs.fakesmsc || procs.fakesmsc.child.exitCode !== null) {
          // -m 0: send no MO messages, only receive (the message argument is required but unused); -v 1: info, so no line per message.
          procs.fakesmsc = run(FAKESMSC, ['-H', '127.0.0.1', '-r', String(ports.fake), '-m', '0', '-v', '1', '0 0 text unused'], o.dir, 'fakesmsc');
        }
        return (await status()).smscOnline ? true : undefined;
      },
      30_000,
      context,
    );
    procs.smsbox = run(SMSBOX, ['-v', '2', conf], o.dir, 'smsbox');
    await until('smsbox connected', async () => ((await status()).smsboxConnected ? true : undefined), 30_000, context);
    await until('sendsms port', async () => ((await get(`http://127.0.0.1:${ports.sendsms}/cgi-bin/sendsms`)).status > 0 ? true : undefined), 30_000, context);
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    sendsmsUrl: (to, text) =>
      `http://127.0.0.1:${ports.sendsms}/cgi-bin/sendsms?${new URLSearchParams({
        username: o.user,
        password: o.password,
        from: '4000',
        to,
        text,
        charset: 'UTF-8',
        coding: '2',
      })
        .toString()
        // URLSearchParams writes a space as "+"; Kannel reads "%20" as plainly.
        .replace(/\+/g, '%20')}`,
    status,
    async stopFakesmsc() {
      const p = procs.fakesmsc;
      if (!p) return Number.NaN;
      await stopProc(p, 'SIGINT');
      return Number(/fakesmsc: \d+ messages sent and (\d+) received/.exec(p.output())?.[1] ?? Number.NaN);
    },
    stop,
  };
}
