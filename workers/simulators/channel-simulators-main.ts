import type { Config } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { startSmtpSink } from './smtp-sink';
import { createWhatsAppSimulator } from './whatsapp-simulator';
import { createRcsSimulator } from './rcs-simulator';
import { createMmsSimulator } from './mms-simulator';
import { keptSimulatorKey, simulatedServiceAccount } from './simulated-service-account';
import { listenError } from '../../lib/listen-error';
import { pointServiceAccountKeyAt } from '../../lib/service-account-key';

/** A simulator's start, a port it cannot bind a configuration error naming `setting`. */
const started = <T>(start: Promise<T>, setting: string, port: number): Promise<T> =>
  start.catch((err: unknown) => {
    throw listenError(err, setting, '127.0.0.1', port, 'another hermod’s simulators');
  });

/**
 * `hermod channel-simulators`: the stand-ins for the e-mail relay and the
 * WhatsApp, RCS and MMS providers that `npm start` runs beside the service.
 * They speak the real protocols (SMTP, the providers' HTTP APIs) and post
 * signed status webhooks to the gateway, exactly as the real services do.
 */
const isAnyAddress = (host: string): boolean => host === '0.0.0.0' || host === '::';

export async function runChannelSimulators(config: Readonly<Config>, log: Logger) {
  const s = config.channelSimulators;
  const c = config.channels;
  const unsigned = (['wab', 'rcs', 'mms'] as const).filter((ch) => !c[ch].webhookSecret);
  if (unsigned.length > 0) {
    // `hermod start` shares a fresh secret with every process; run alone, the gateways refuse what these sign with nothing.
    log.warn('no webhook secret: the gateways will refuse these simulators’ status reports', {
      channels: unsigned,
      set: unsigned.map((ch) => `HERMOD_${ch.toUpperCase()}_WEBHOOK_SECRET`),
    });
  }
  // Under `hermod start` with HERMOD_HTTPS_PORT=0 the gateways' port is known only once they listen, after these start:
  // the supervisor says it then, and a webhook base on port 0 takes it.
  let webhookBase = s.webhookBase;
  process.on('message', (msg: { type?: string; https?: number }) => {
    if (msg?.type !== 'gateways-listening' || !msg.https) return;
    const url = new URL(webhookBase);
    if (url.port === '0') {
      url.port = String(msg.https);
      webhookBase = url.href.replace(/\/+$/, '');
      log.info('webhooks go to the gateways', { webhookBase });
    }
    // As RBM does when a webhook URL is configured: the gateway must answer with the secret.
    rcs
      .verifyWebhook()
      .then((answer) =>
        answer.verified ? log.info('RBM webhook verified', { url: `${webhookBase}/rcs` }) : log.warn('RBM webhook not verified', { ...answer }),
      )
      .catch((err: unknown) => log.warn('RBM webhook not verified', { err }));
  });
  // The sink bounces `…+late-bounce…` mail to hermod's bounce listener, as a relay sends DSNs to the return path's MX.
  const bounces = c.email.bounceListener;
  const bounceTo = bounces && bounces.port !== 0 ? { host: isAnyAddress(bounces.host) ? '127.0.0.1' : bounces.host, port: bounces.port } : undefined;
  const smtp = await started(startSmtpSink(s.smtpPort, log.child({ simulator: 'smtp' }), '127.0.0.1', bounceTo), 'HERMOD_SMTP_SINK_PORT', s.smtpPort);
  const wab = createWhatsAppSimulator({
    host: '127.0.0.1',
    port: s.wabPort,
    token: c.wab.token,
    appSecret: c.wab.webhookSecret,
    get webhookUrl() {
      return `${webhookBase}/wab`;
    },
    deliverDelayMs: 100,
    readDelayMs: 300,
  });
  // Run alone, with no key given: one kept in the data directory, for the RCS workers to be given too.
  const rbmKey = c.rcs.serviceAccount || keptSimulatorKey(config.dataDir);
  const rcs = createRcsSimulator({
    host: '127.0.0.1',
    port: s.rcsPort,
    serviceAccount: simulatedServiceAccount(rbmKey, log),
    clientToken: c.rcs.webhookSecret,
    get webhookUrl() {
      return `${webhookBase}/rcs`;
    },
    deliverDelayMs: 100,
    readDelayMs: 300,
  });
  const mms = createMmsSimulator({
    host: '127.0.0.1',
    port: s.mmsPort,
    token: c.mms.token,
    webhookSecret: c.mms.webhookSecret,
    get webhookUrl() {
      return `${webhookBase}/mms`;
    },
    deliverDelayMs: 150,
  });
  let ports: { smtp: number; wab: number; rcs: number; mms: number };
  try {
    ports = {
      smtp: smtp.port,
      wab: (await started(wab.start(), 'HERMOD_WAB_SIMULATOR_PORT', s.wabPort)).port,
      rcs: (await started(rcs.start(), 'HERMOD_RCS_SIMULATOR_PORT', s.rcsPort)).port,
      mms: (await started(mms.start(), 'HERMOD_MMS_SIMULATOR_PORT', s.mmsPort)).port,
    };
  } catch (err) {
    await Promise.allSettled([smtp.stop(), wab.stop(), rcs.stop(), mms.stop()]);
    throw err;
  }
  if (!c.rcs.serviceAccount) {
    pointServiceAccountKeyAt(rbmKey, `http://127.0.0.1:${ports.rcs}/token`);
    log.info('the RBM simulator takes tokens for this key: give it to the RCS workers', { HERMOD_RCS_SERVICE_ACCOUNT: rbmKey });
  }
  log.info('channel simulators listening', ports);
  return {
    ports,
    async stop() {
      await Promise.all([smtp.stop(), wab.stop(), rcs.stop(), mms.stop()]);
    },
  };
}
