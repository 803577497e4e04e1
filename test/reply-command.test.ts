import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

const ROOT = path.resolve(import.meta.dirname, '..');

/** `hermod reply …` as a user types it, against the SMSC simulator on `port`. */
function reply(port: number, ...args: string[]): Promise<{ code: number | null; output: string; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [path.join(ROOT, 'bin/hermod.js'), 'reply', ...args], {
      cwd: ROOT,
      env: { ...process.env, HERMOD_SMSC_HOST: '127.0.0.1', HERMOD_SMSC_PORT: String(port) },
    });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    c.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    c.on('close', (code) => resolve({ code, output: stdout + stderr, stdout, stderr }));
  });
}

describe('hermod reply: a handset answering through the SMSC simulator', () => {
  let h: HermodWithSimulator;
  let receiver: http.Server;
  const replies: { source: string; content: string; reply_to?: string }[] = [];
  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        if (req.url === '/reply') replies.push(JSON.parse(body));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    h = await startHermodWithSimulator('reply-command', { HERMOD_CALLBACK_ALLOW_PRIVATE: 'true' });
    const port = (receiver.address() as { port: number }).port;
    expect((await h.hermod.cli(['apps', 'set-callbacks', 'acme', '--reply', `http://localhost:${port}/reply`])).code).toBe(0);
  });
  afterAll(async () => {
    await h?.stop();
    receiver?.close();
  });

  it('delivers the text, whatever its script, to the application that last wrote to the handset, and a STOP opts it out', async () => {
    const sent = await h.client.post('/rest/sms/v2/messages', { destination: '+6421999101', content: 'Kei te pēhea koe? 🌿' });
    expect(sent.status).toBe(202);
    await eventually(async () => ((await h.client.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json.status === 'received' ? true : undefined));

    const said = await reply(h.simulator.port, '+6421999101', '4000', 'Kei te pai — 很好 👋🏽 مرحبا');
    expect(said, said.output).toMatchObject({ code: 0 });
    const got = await eventually(() => replies.find((r) => r.source === '+6421999101'));
    expect(got).toMatchObject({ content: 'Kei te pai — 很好 👋🏽 مرحبا', reply_to: sent.json.id });

    expect((await reply(h.simulator.port, '+6421999101', '4000', 'STOP')).code).toBe(0);
    await eventually(async () => ((await h.hermod.cli(['optouts', 'list', 'acme'])).output.includes('+6421999101') ? true : undefined));
  });

  it('says so when nothing is bound to take the reply, or no simulator answers', async () => {
    const idle = await startHermodWithSimulator('reply-command-idle');
    const port = idle.simulator.port;
    await idle.hermod.stop();
    const none = await reply(port, '+6421999102', '4000', 'Kia ora');
    expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 1, stdout: '' });
    expect(none.stderr).toMatch(/^error: no ESME \(hermod\) is bound/);
    await idle.simulator.stop();
    const gone = await reply(port, '+6421999102', '4000', 'Kia ora');
    expect({ code: gone.code, stdout: gone.stdout }).toEqual({ code: 1, stdout: '' });
    expect(gone.stderr).toMatch(/^error: no SMSC simulator answered at 127\.0\.0\.1:\d+/);
    const usage = await reply(port, '+6421999102', '4000');
    expect({ code: usage.code, stdout: usage.stdout }).toEqual({ code: 2, stdout: '' });
    expect(usage.stderr).toMatch(/^usage:\n {2}reply <from> <to> <text>/);
    // --carrier names a simulated carrier of a carriers file; without one there is none to name, and a typo is said.
    const noFile = await reply(port, '+6421999102', '4000', 'Kia ora', '--carrier', 'spark');
    expect({ code: noFile.code, stderr: noFile.stderr }).toEqual({
      code: 2,
      stderr: 'error: --carrier spark: HERMOD_CARRIERS_FILE names no simulated carrier (a carrier with simulated:)\n',
    });
    const typo = await reply(port, '+6421999102', '4000', 'Kia ora', '--carrer', 'spark');
    expect({ code: typo.code, stderr: typo.stderr }).toEqual({
      code: 2,
      stderr: 'error: unknown option --carrer for "reply" (it takes --carrier <name>, --whatsapp)\n',
    });
  });
});
