import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createSmscSimulator, type SmscSimulator, type SmscSimulatorOptions } from '../../workers/simulators/smsc-simulator';
import { createSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../../workers/simulators/smtp-sink';
import { createWhatsAppSimulator, type WhatsAppSimulator } from '../../workers/simulators/whatsapp-simulator';
import { createRcsSimulator, type RcsSimulator } from '../../workers/simulators/rcs-simulator';
import { createMmsSimulator, type MmsSimulator } from '../../workers/simulators/mms-simulator';
import { pointServiceAccountKeyAt, writeServiceAccountKey } from '../../lib/service-account-key';
import { createClient, type Client } from './https-client';
import { startHermod, type HermodProcess } from './hermod-process';

export const API_KEY = 'test-api-key-0123456789abcdef';
const TOKEN = 'carrier-token';
const SECRET = 'webhook-secret';

export interface ReceivedCallback {
  body: any;
  headers: http.IncomingHttpHeaders;
  at: number;
  /** The path it was posted to (applications may be given different ones). */
  path: string;
}

export interface HermodWithChannels {
  hermod: HermodProcess;
  smsc: SmscSimulator;
  smtp: SmtpSink;
  wab: WhatsAppSimulator;
  rcs: RcsSimulator;
  mms: MmsSimulator;
  /** Authenticated with the application's API key in `authorization`. */
  client: Client;
  /** Intelligent Messaging status callbacks the application received (and any other callback pointed at receiverUrl). */
  callbacks: ReceivedCallback[];
  /** Where the callback receiver listens (http://localhost:<port>). */
  receiverUrl: string;
  /** The port of the bounce listener the service logged at its latest start (undefined before it listens). */
  bouncePort(): number | undefined;
  /** What the receiver announces in X-RateLimit-Limit from now on (undefined: no header). */
  announceRateLimit(perSecond: number | undefined): void;
  /**
   * kill -9 of the whole service (or, `graceful`, SIGTERM and its orderly stop), then a start on the same data
   * directory (on new ports; the simulators follow). `whileDown` runs between the two.
   */
  restart(options?: { graceful?: boolean; whileDown?: () => Promise<void> | void }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * hermod with every channel pointed at simulators run by the test itself
 * (SMSC, SMTP sink, WhatsApp, RCS, MMS), their webhooks going to hermod's
 * gateway, and a receiver for the application's IM status callbacks.
 */
export async function startHermodWithChannels(
  name: string,
  options: {
    readDelayMs?: number;
    env?: Record<string, string>;
    callbackRateLimit?: number;
    smsc?: Pick<SmscSimulatorOptions, 'outcomes' | 'seed'>;
    smtp?: Pick<SmtpSinkOptions, 'greylistMs'>;
  } = {},
): Promise<HermodWithChannels> {
  // Host names, not addresses, for every URL hermod and the simulators are given. Hermod's HTTPS port is the one
  // it got at its latest start (port 0), so the simulators read their webhook URLs when they post.
  let hermod: HermodProcess | undefined;
  const webhooks = (channel: string): string => `https://localhost:${hermod?.httpsPort}/webhooks/${channel}`;
  const smsc = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20, ...options.smsc });
  // The sink bounces `…+late-bounce…` mail to hermod's bounce listener (port 0: the port its e-mail worker logged).
  const smtp = createSmtpSink({
    host: '127.0.0.1',
    port: 0,
    bounceTo: () => {
      const port = hermod && loggedBouncePort(hermod.output());
      return port ? { host: 'localhost', port } : undefined;
    },
    ...options.smtp,
  });
  const wab = createWhatsAppSimulator({
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    appSecret: SECRET,
    get webhookUrl() {
      return webhooks('wab');
    },
    deliverDelayMs: 50,
    readDelayMs: options.readDelayMs ?? 150,
  });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `hermod-${name}-`));
  // RBM takes OAuth tokens of a service account; the key's token_uri is the simulator's, on the port it gets.
  const rbmKey = writeServiceAccountKey(path.join(dataDir, 'rbm-key'), 'http://localhost:1/token');
  const rcs = createRcsSimulator({
    host: '127.0.0.1',
    port: 0,
    serviceAccount: rbmKey,
    clientToken: SECRET,
    get webhookUrl() {
      return webhooks('rcs');
    },
    deliverDelayMs: 50,
    readDelayMs: 150,
  });
  const mms = createMmsSimulator({
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    webhookSecret: SECRET,
    get webhookUrl() {
      return webhooks('mms');
    },
    deliverDelayMs: 50,
  });
  const [smscPort, smtpPort, wabPort, rcsPort, mmsPort] = [
    (await smsc.start()).port,
    (await smtp.start()).port,
    (await wab.start()).port,
    (await rcs.start()).port,
    (await mms.start()).port,
  ];

  const callbacks: ReceivedCallback[] = [];
  let rateLimit = options.callbackRateLimit;
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      callbacks.push({ body: JSON.parse(body), headers: req.headers, at: Date.now(), path: req.url ?? '' });
      res.writeHead(200, rateLimit ? { 'X-RateLimit-Limit': String(rateLimit) } : {}).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverPort = (receiver.address() as { port: number }).port;

  pointServiceAccountKeyAt(rbmKey.file, `http://localhost:${rcsPort}/token`);
  const carrier = (prefix: string, port: number) => ({
    [`HERMOD_${prefix}_URL`]: `http://localhost:${port}`,
    [`HERMOD_${prefix}_TOKEN`]: TOKEN,
    [`HERMOD_${prefix}_WEBHOOK_SECRET`]: SECRET,
  });
  const startOptions = {
    dataDir,
    env: {
      HERMOD_SMSC_SIMULATOR: 'false',
      HERMOD_SMPP_PORT: String(smscPort),
      HERMOD_SMTP_PORT: String(smtpPort),
      HERMOD_BOUNCE_SMTP_PORT: '0',
      HERMOD_BOUNCE_DOMAIN: 'localhost',
      ...carrier('WAB', wabPort),
      HERMOD_RCS_URL: `http://localhost:${rcsPort}`,
      HERMOD_RCS_SERVICE_ACCOUNT: rbmKey.file,
      HERMOD_RCS_WEBHOOK_SECRET: SECRET,
      ...carrier('MMS', mmsPort),
      HERMOD_GATEWAYS: '1',
      HERMOD_BOOTSTRAP_API_KEY: API_KEY,
      HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
      ...options.env,
    },
  };
  hermod = await startHermod(startOptions);
  const set = await hermod.cli(['apps', 'set-callbacks', 'acme', '--im-status', `http://localhost:${receiverPort}/im`]);
  if (set.code !== 0) throw new Error(`could not set the IM callback URL: ${set.output}`);
  let client = createClient(hermod.baseUrl, hermod.ca());
  const keyed: Client = {
    request: (method, p, o) => client.request(method, p, { ...o, headers: { authorization: API_KEY, ...o?.headers } }),
    post: (p, body, headers) => client.post(p, body, { authorization: API_KEY, ...headers }),
    get: (p, headers) => client.get(p, { authorization: API_KEY, ...headers }),
    close: () => client.close(),
  };
  return {
    get hermod() {
      return hermod!;
    },
    smsc,
    smtp,
    wab,
    rcs,
    mms,
    client: keyed,
    callbacks,
    receiverUrl: `http://localhost:${receiverPort}`,
    bouncePort: () => (hermod ? loggedBouncePort(hermod.output()) : undefined),
    announceRateLimit(perSecond) {
      rateLimit = perSecond;
    },
    async restart(o = {}) {
      if (o.graceful) await hermod!.stop();
      else await hermod!.kill9();
      client.close();
      await o.whileDown?.();
      hermod = await startHermod(startOptions);
      client = createClient(hermod.baseUrl, hermod.ca());
    },
    async stop() {
      client.close();
      await hermod!.stop();
      receiver.close();
      await Promise.all([smsc.stop(), smtp.stop(), wab.stop(), rcs.stop(), mms.stop()]);
    },
  };
}

/** The port of the latest bounce listener the service logged (a restart logs a new one). */
function loggedBouncePort(output: string): number | undefined {
  const lines = output.split('\n').filter((l) => l.includes('"msg":"bounce listener listening"'));
  const port = lines.length > 0 ? (JSON.parse(lines[lines.length - 1]!) as { port?: number }).port : undefined;
  return typeof port === 'number' ? port : undefined;
}
