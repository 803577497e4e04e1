import type { Config } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { createSmppClient } from '../../workers/carriers/smpp/smpp-client';
import { HANDSET_SYSTEM_ID } from '../../workers/simulators/smsc-simulator';

/** The client's reconnect warnings are not the user's business: the answer says what went wrong. */
const silent: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };

const REPLY_USAGE = `  reply <from> <to> <text>                   a handset's message through the SMSC simulator (HERMOD_SMSC_HOST, HERMOD_SMSC_PORT):
                                             <from> the handset, <to> the address it answers (a short code, a sender id)`;

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
  const [from, to, ...words] = args;
  const text = words.join(' ');
  if (!from || !to || text === '') {
    err(`usage:\n${REPLY_USAGE}`);
    return 2;
  }
  const { host, port } = config.simulator;
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
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no SMSC simulator answered at ${host}:${port}`)), 5000).unref());
    await Promise.race([bound, timeout]);
    await client.submit({
      source: from,
      destination: to,
      shortMessage: Buffer.from(text, 'utf16le').swap16(),
      dataCoding: 8,
      registeredDelivery: 0,
    });
    out(`the SMSC simulator delivered "${text}" from ${from} to ${to}`);
    return 0;
  } catch (e) {
    const message = (e as Error).message;
    err(`error: ${/ESME_RSYSERR|system error/i.test(message) ? 'no ESME (hermod) is bound to the SMSC simulator to take it' : message}`);
    return 1;
  } finally {
    await client.close(0).catch(() => undefined);
  }
}
