import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface WrkRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** A header given a value no other request of the run has (an Idempotency-Key per request). */
  uniqueHeader?: string;
}

export interface WrkFigures {
  rps: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  /** Responses wrk read in the run. */
  requests: number;
  /** wrk's "Non-2xx or 3xx responses". */
  non2xx: number;
  /** Socket errors: connect, read, write and timeouts. */
  errors: number;
  output: string;
}

/** A Lua string literal holding `s`'s UTF-8 bytes exactly (non-ASCII as decimal escapes). */
const luaString = (s: string): string =>
  `"${[...Buffer.from(s, 'utf8')].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${b}`)).join('')}"`;

/** Debian's wrk. */
const WRK = '/usr/bin/wrk';

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "635.00us", "1.50ms", "2.00s" → milliseconds. */
function ms(text: string | undefined): number {
  const m = /^([\d.]+)(us|ms|s|m|h)$/.exec(text ?? '');
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : Number.NaN;
}

/** Reads wrk's `--latency` report. */
export function parseWrk(output: string): Omit<WrkFigures, 'output'> {
  const pct = (p: string): number => ms(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(output)?.[1]);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? Number.NaN),
    p50: pct('50'),
    p99: pct('99'),
    requests: Number(/(\d+) requests in /.exec(output)?.[1] ?? Number.NaN),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
    errors: socket ? socket.slice(1).reduce((n, x) => n + Number(x), 0) : 0,
  };
}

/**
 * One wrk run (`--latency`) against `request`: method, headers and body go in a
 * Lua script written to `dir`. Rejects when wrk fails or prints no figures.
 */
export async function runWrk(
  request: WrkRequest,
  o: { dir: string; name: string; connections: number; threads: number; seconds: number },
): Promise<WrkFigures> {
  const script = path.join(o.dir, `${o.name}.lua`);
  fs.writeFileSync(
    script,
    [
      `wrk.method = ${luaString(request.method ?? 'GET')}`,
      ...Object.entries(request.headers ?? {}).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`),
      ...(request.body === undefined ? [] : [`wrk.body = ${luaString(request.body)}`]),
      // Each wrk thread has a Lua state of its own: setup() numbers them, and each numbers its requests.
      ...(request.uniqueHeader === undefined
        ? []
        : [
            'local threads = 0',
            'function setup(thread) threads = threads + 1; thread:set("tid", threads) end',
            'local n = 0',
            `local run = ${luaString(`${process.pid}-${Date.now()}`)}`,
            `function request() n = n + 1; wrk.headers[${luaString(request.uniqueHeader)}] = run .. "-" .. tid .. "-" .. n; return wrk.format() end`,
          ]),
      '',
    ].join('\n'),
  );
  const args = ['-t', String(o.threads), '-c', String(o.connections), '-d', `${o.seconds}s`, '--timeout', '10s', '--latency', '-s', script, request.url];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(WRK, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`wrk ${args.join(' ')} exited with ${code}:\n${out}`))));
  });
  fs.writeFileSync(path.join(o.dir, `${o.name}.wrk.txt`), output);
  const figures = parseWrk(output);
  if (!Number.isFinite(figures.rps) || !Number.isFinite(figures.requests)) throw new Error(`wrk printed no figures:\n${output}`);
  return { ...figures, output };
}
