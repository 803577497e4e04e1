import type { Config } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { createSmppClient } from '../../workers/carriers/smpp/smpp-client';
import { HANDSET_SYSTEM_ID } from '../../workers/simulators/smsc-simulator';
import { HANDSET_MESSAGES_PATH } from '../../workers/simulators/whatsapp-simulator';

/** The client's reconnect warnings are not the user's business: the answer says what went wrong. */
const silent: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };

const REPLY_USAGE = `  reply <from> <to> <text> [--carrier <name>]
                                             a handset's message through the SMSC simulator (HERMOD_SMSC_HOST, HERMOD_SMSC_PORT),
                                             or a simulated carrier of HERMOD_CARRIERS_FILE (--carrier, default its first):
                                             <from> the handset, <to> the address it answers (a short code, a sender id)
  reply --whatsapp <from> <text>             a handset's WhatsApp message to the business number, posted by the WhatsApp
                                             simulator (HERMOD_WAB_URL, or HERMOD_WAB_SIMULATOR_PORT under npm start)`;

/** Where the handset's SMSC listens: a simulated carrier of the carriers file, or the SMSC simulator. */
function smscOf(config: Readonly<Config>, carrier: string | undefined): { host: string; port: number; name: string } | string {
  const simulated = config.carriers.file ? config.carriers.carriers.filter((c) => c.simulated) : [];
  if (carrier !== undefined) {
    const named = simulated.find((c) => c.name === carrier);
    if (named) return { host: named.host, port: named.port, name: `simulated carrier ${named.name}` };
    return simulated.length > 0
      ? `no simulated carrier is named ${JSON.stringify(carrier)} (simulated carriers: ${simulated.map((c) => c.name).join(', ')})`
      : `--carrier ${carrier}: HERMOD_CARRIERS_FILE names no simulated carrier (a carrier with simulated:)`;
  }
  const first = simulated[0];
  if (first) return { host: first.host, port: first.port, name: `simulated carrier ${first.name}` };
  return { host: config.simulator.host, port: config.simulator.port, name: 'SMSC simulator' };
}

/**
 * `hermod reply`: binds to the SMSC simulator as a handset and submits the
 * text, which the simulator delivers to hermod as a reply (deliver_sm), as a
 * carrier would deliver a handset's message. Sent whole as UCS-2 (any text).
 * What it did goes to `out`, what went wrong to `err`.
 */
export async function runReplyCommand(
  config: Readonly<Config>,
  args: readonly string[],
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  if (args.includes('--whatsapp'))
    return whatsAppReply(
      config,
      args.filter((a) => a !== '--whatsapp'),
      out,
      err,
    );
  const at = args.indexOf('--carrier');
  const carrier = at >= 0 ? args[at + 1] : undefined;
  const rest = at >= 0 ? [...args.slice(0, at), ...args.slice(at + 2)] : [...args];
  const [from, to, ...words] = rest;
  const text = words.join(' ');
  if (!from || !to || text === '' || (at >= 0 && !carrier)) {
    err(`usage:\n${REPLY_USAGE}`);
    return 2;
  }
  const smsc = smscOf(config, carrier);
  if (typeof smsc === 'string') {
    err(`error: ${smsc}`);
    return 2;
  }
  const { host, port } = smsc;
  const client = createSmppClient({
    host,
    port,
    systemId: HANDSET_SYSTEM_ID,
    password: '',
    windowSize: 1,
    enquireLinkMs: 0,
    reconnectMaxMs: 1000,
    log: silent,
  });
  try {
    const bound = client.ready();
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${smsc.name} answered at ${host}:${port}`)), 5000).unref());
    await Promise.race([bound, timeout]);
    await client.submit({
      source: from,
      destination: to,
      shortMessage: Buffer.from(text, 'utf16le').swap16(),
      dataCoding: 8,
      registeredDelivery: 0,
    });
    out(`the ${smsc.name} delivered "${text}" from ${from} to ${to}`);
    return 0;
  } catch (e) {
    const message = (e as Error).message;
    err(`error: ${/ESME_RSYSERR|system error/i.test(message) ? `no ESME (hermod) is bound to the ${smsc.name} to take it` : message}`);
    return 1;
  } finally {
    await client.close(0).catch(() => undefined);
  }
}

/**
 * `hermod reply --whatsapp`: asks the WhatsApp simulator to have a handset write to the business; the simulator
 * posts it to the gateway as the Cloud API's signed `messages` webhook (whatsapp-simulator.ts handsetWrites).
 */
async function whatsAppReply(config: Readonly<Config>, args: readonly string[], out: (line: string) => void, err: (line: string) => void): Promise<number> {
  const [from, text, ...extra] = args;
  if (!from || text === undefined || args.includes('--carrier')) {
    err(`usage:\n${REPLY_USAGE}`);
    return 2;
  }
  if (extra.length > 0) {
    err(
      `error: too many arguments for "reply --whatsapp" (it takes <from> <text>): ${extra.map((a) => JSON.stringify(a)).join(' ')} — quote a value that has spaces`,
    );
    return 2;
  }
  // What the gateway takes from a webhook: a sender of 6 or more digits, a text with something in it.
  if (!/^\+?[1-9]\d{5,14}$/.test(from)) {
    err(`error: <from> must be a handset’s number, + and 6 to 15 digits (+6421000001), got ${JSON.stringify(from)}`);
    return 2;
  }
  if (text.trim() === '') {
    err('error: the text is empty');
    return 2;
  }
  const base = config.channels.wab.baseUrl.replace(/\/+$/, '');
  let answer: Response;
  try {
    answer = await fetch(`${base}${HANDSET_MESSAGES_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${config.channels.wab.token}` },
      body: JSON.stringify({ from, text }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch {
    err(`error: no WhatsApp simulator answered at ${base}`);
    return 1;
  }
  const body = (await answer.json().catch(() => undefined)) as { id?: string; from?: string; to?: string; error?: string } | undefined;
  if (answer.ok && body?.id) {
    out(`the WhatsApp simulator delivered "${text}" from +${body.from} to the business number +${body.to} (${body.id})`);
    return 0;
  }
  if (typeof body?.error !== 'string') {
    err(`error: ${base} is not hermod's WhatsApp simulator (it answered ${answer.status})`);
    return 1;
  }
  err(`error: ${answer.status === 502 ? `the gateway did not take it: ${body.error}` : body.error}`);
  return answer.status === 400 ? 2 : 1;
}
