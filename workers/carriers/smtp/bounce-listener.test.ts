import { randomUUID } from 'node:crypto';
import { createTransport } from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { quietLog } from '../../simulators/smpp-test-kit';
import { createBounceListener, type Bounce, type BounceListener } from './bounce-listener';
import { postfixBounce, RFC3464_MULTI_RECIPIENT, RFC3464_SIMPLE } from './dsn-fixtures';
import { verpAddress } from './verp';

const DOMAIN = 'bounces.hermod.example';
const PATHS = { domain: DOMAIN, secret: 'tēnā-koe-a-secret-of-32-bytes-or-so' };
/** The return path hermod gives the message `id`. */
const verpOf = (id: string, paths = PATHS): string => verpAddress(id, paths)!;
const listeners: BounceListener[] = [];
afterEach(async () => {
  for (const l of listeners.splice(0)) await l.stop();
});

async function listen(onBounce: (b: Bounce) => Promise<void>): Promise<number> {
  const l = createBounceListener({ host: '127.0.0.1', port: 0, returnPaths: PATHS, log: quietLog, onBounce });
  listeners.push(l);
  return (await l.start()).port;
}

/** Delivers `raw` to the listener as a bouncing server does: from the null sender, to the return path. */
async function deliver(port: number, to: string, raw: string): Promise<void> {
  const t = createTransport({ host: 'localhost', port, secure: false, ignoreTLS: true });
  try {
    await t.sendMail({ envelope: { from: '', to: [to] }, raw });
  } finally {
    t.close();
  }
}

describe('bounce listener', () => {
  it('turns a Postfix bounce to a return path into a bounce of that message, with the status and the server’s words', async () => {
    const got: Bounce[] = [];
    const port = await listen(async (b) => void got.push(b));
    const id = `msg-${randomUUID()}`;
    const verp = verpOf(id);

    await deliver(port, verp, postfixBounce({ to: 'tēnā.koe@example.org', verp, hermodId: id }));

    expect(got).toEqual([
      {
        messageId: id,
        recipient: 'tēnā.koe@example.org',
        status: '5.1.1',
        diagnostic: 'smtp; 550 5.1.1 <tēnā.koe@example.org>: Recipient address rejected: User unknown in virtual mailbox table',
        at: expect.any(Number),
      },
    ]);
  });

  it('takes a bounce to a return path of an internationalised domain, given in its ASCII form as hermod sends it', async () => {
    const got: Bounce[] = [];
    // HERMOD_SMTP_FROM at kāinga.nz: the bounce domain defaults to its ASCII form.
    const l = createBounceListener({
      host: '127.0.0.1',
      port: 0,
      returnPaths: { ...PATHS, domain: 'xn--kinga-fwa.nz' },
      log: quietLog,
      onBounce: async (b) => void got.push(b),
    });
    listeners.push(l);
    const { port } = await l.start();
    const id = `msg-${randomUUID()}`;
    const verp = verpOf(id, { ...PATHS, domain: 'xn--kinga-fwa.nz' });
    await deliver(port, verp, postfixBounce({ to: 'mere@kāinga.nz', verp, hermodId: id }));
    expect(got).toMatchObject([{ messageId: id, recipient: 'mere@kāinga.nz', status: '5.1.1' }]);
  });

  it('replays RFC 3464’s examples: failed recipients become bounces, a delay does not', async () => {
    const got: Bounce[] = [];
    const port = await listen(async (b) => void got.push(b));

    await deliver(port, verpOf('simple-1'), RFC3464_SIMPLE);
    await deliver(port, verpOf('multi-2'), RFC3464_MULTI_RECIPIENT);

    expect(got.map((b) => [b.messageId, b.recipient, b.status])).toEqual([
      ['simple-1', 'louisl@larry.slip.umd.edu', '4.0.0'],
      ['multi-2', 'arathib@vnet.ibm.com', '5.0.0'],
      ['multi-2', 'wsnell@sdcc13.ucsd.edu', '5.0.0'],
    ]);
  });

  it('refuses mail for any address but a return path of its domain', async () => {
    const port = await listen(async () => undefined);
    await expect(deliver(port, 'postmaster@bounces.hermod.example', RFC3464_SIMPLE)).rejects.toMatchObject({ responseCode: 550 });
    await expect(deliver(port, verpOf('msg-1').replace(DOMAIN, 'elsewhere.example'), RFC3464_SIMPLE)).rejects.toMatchObject({ responseCode: 550 });
  });

  it('refuses a bounce to a return path it did not sign: a message id alone, a tag of another message or another secret', async () => {
    const got: Bounce[] = [];
    const port = await listen(async (b) => void got.push(b));
    const id = randomUUID();
    const otherTag = verpOf(randomUUID()).replace(/^.*=/, '');
    for (const forged of [
      `bounces+${id}@${DOMAIN}`,
      `bounces+${id}=@${DOMAIN}`,
      `bounces+${id}=${otherTag}`,
      verpOf(id, { ...PATHS, secret: 'another-deployment’s-secret-0001' }),
    ]) {
      const to = forged.includes('@') ? forged : `${forged}@${DOMAIN}`;
      await expect(deliver(port, to, postfixBounce({ to: 'ana@example.org', verp: to, hermodId: id }))).rejects.toMatchObject({ responseCode: 550 });
    }
    expect(got).toEqual([]);
    // The one it signed, with its local part in capitals as some servers write it back, is taken.
    await deliver(
      port,
      verpOf(id)
        .replace(/^[^@]*/, (local) => local.toUpperCase())
        .replace(id.toUpperCase(), id),
      RFC3464_SIMPLE,
    );
    expect(got.map((b) => b.messageId)).toEqual([id]);
  });

  it('accepts and drops mail to a return path that is not a DSN (an autoresponder)', async () => {
    const got: Bounce[] = [];
    const port = await listen(async (b) => void got.push(b));
    await deliver(port, verpOf('msg-2'), 'Subject: Out of office — kei te hararei ahau 🏖️\r\n\r\nBack on Monday.\r\n');
    expect(got).toEqual([]);
  });

  it('answers 451 when the bounce cannot be recorded, so the sending server keeps it and tries again', async () => {
    let fail = true;
    const got: Bounce[] = [];
    const port = await listen(async (b) => {
      if (fail) throw new Error('bus down');
      got.push(b);
    });
    const verp = verpOf('msg-3');
    const raw = postfixBounce({ to: 'ana@example.org', verp, hermodId: 'msg-3' });

    await expect(deliver(port, verp, raw)).rejects.toMatchObject({ responseCode: 451 });
    fail = false;
    await deliver(port, verp, raw);
    expect(got.map((b) => b.messageId)).toEqual(['msg-3']);
  });
});
