import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumInstalled, launchChromium } from './support/console-browser';
import { createClient, type Client } from './support/https-client';
import { eventually } from './support/eventually';
import { startHermod } from './support/hermod-process';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

const ROOT = path.resolve(import.meta.dirname, '..');
const ARTIFACTS = path.join(ROOT, 'test-artifacts');
const USER = 'kaiwhakahaere';
const PASSWORD = 'tēnā-koe-👋🏽-密码';

/**
 * Run in the page: every visible text element whose colour against its background is below
 * WCAG AA's 4.5:1 (relative luminance of sRGB), as "TAG \"text\": ratio".
 */
const LOW_CONTRAST_TEXT = `(() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) ?? []).slice(0, 4).map(Number);
  const lin = (v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  const luminance = ([r, g, b]) => 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c;
    }
    return [255, 255, 255];
  };
  const problems = [];
  for (const el of document.querySelectorAll('h1, h2, th, td, caption, label, button, p, dt, dd, input, a, span')) {
    if (!el.offsetParent || !(el.textContent || el.value || '').trim()) continue;
    const fg = luminance(rgb(getComputedStyle(el).color));
    const bg = luminance(background(el));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    if (ratio < 4.5) problems.push(el.tagName + ' "' + (el.textContent || el.value).trim().slice(0, 30) + '": ' + ratio.toFixed(2));
  }
  return problems;
})()`;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function request(url: string, options: { auth?: string; method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.auth !== undefined) headers.authorization = `Basic ${Buffer.from(options.auth, 'utf8').toString('base64')}`;
    const req = http.request(url, { method: options.method ?? 'GET', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The console's URL from the supervisor's "hermod is running" line, with the host name operators type. */
function consoleUrl(output: string): string | undefined {
  const line = output.split('\n').find((l) => l.includes('"msg":"hermod is running"'));
  const url = line ? (JSON.parse(line) as { console?: string }).console : undefined;
  return url?.replace('127.0.0.1', 'localhost');
}

describe('operator console', () => {
  let h: HermodWithSimulator;
  let base: string;
  const auth = `${USER}:${PASSWORD}`;
  let browser: Browser | undefined;
  let page: Page;
  // The application's callback receiver: its first answer is a 503, every later one a 204.
  let receiver: http.Server;
  let callbacksAnswered = 0;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(callbacksAnswered++ === 0 ? 503 : 204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverPort = (receiver.address() as { port: number }).port;
    h = await startHermodWithSimulator(
      'console',
      {
        HERMOD_ADMIN_PORT: '0',
        HERMOD_ADMIN_USER: USER,
        HERMOD_ADMIN_PASSWORD: PASSWORD,
        HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
        // A carrier that takes about 160 submits a second (8 in flight, each answered after 50 ms):
        // the campaign test's 10,000 members keep its campaign running for a minute.
        HERMOD_SMPP_WINDOW: '8',
      },
      { submitRespDelayMs: 50 },
    );
    const set = await h.hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://hook:s%C4%93cret@localhost:${receiverPort}/status`]);
    expect(set.code).toBe(0);
    base = consoleUrl(h.hermod.output()) ?? '';
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    if (chromiumInstalled()) {
      browser = await launchChromium();
      const context = await browser.newContext({ httpCredentials: { username: USER, password: PASSWORD }, viewport: { width: 1280, height: 1000 } });
      page = await context.newPage();
    }
  });

  afterAll(async () => {
    quiet?.close();
    await browser?.close();
    await h?.stop();
    receiver?.close();
  });

  it('is served on 127.0.0.1 only, at the port the running line names', () => {
    expect(base).toMatch(/^http:\/\/localhost:\d+\/$/);
  });

  it('answers 401 with a Basic challenge to a request without credentials or with a wrong password', async () => {
    for (const credentials of [undefined, `${USER}:wrong`, `admin:${PASSWORD}`, `${USER}`]) {
      const r = await request(`${base}api/binds`, { auth: credentials });
      expect(r.status, String(credentials)).toBe(401);
      expect(r.headers['www-authenticate']).toMatch(/^Basic realm="hermod operator console"/);
      expect(r.body).not.toContain('sms');
    }
    expect((await request(base)).status).toBe(401);
  });

  it('serves the page, its style and its script from the package to the right user and password', async () => {
    const page = await request(base, { auth });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<label for="message-id">Message id</label>');
    expect(page.body).not.toMatch(/https?:\/\//);
    for (const file of ['console.css', 'console.js']) expect((await request(`${base}${file}`, { auth })).status).toBe(200);
  });

  it("reports the SMS worker's bind as up, from what the worker wrote into hot state", async () => {
    const binds = await eventually(async () => {
      const r = await request(`${base}api/binds`, { auth });
      const json = JSON.parse(r.body) as { binds: { channel: string; up: boolean; windowSize: number }[] };
      return json.binds.some((b) => b.channel === 'sms' && b.up) ? json.binds : undefined;
    });
    expect(binds.find((b) => b.channel === 'sms')).toMatchObject({ up: true, windowSize: 8 });
  });

  it('answers an unknown message id with 404, a bad one or a torn path with 400, and an unknown request with 404, in its JSON error shape', async () => {
    const unknown = await request(`${base}api/messages/3f2504e0-4f89-41d3-9a0c-0305e82c3301`, { auth });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toEqual({ error: { code: 'not_found', message: 'no message has the id 3f2504e0-4f89-41d3-9a0c-0305e82c3301' } });
    const bad = await request(`${base}api/messages/${encodeURIComponent('Kia ora 👋🏽')}`, { auth });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('invalid_attrib');
    const torn = await request(`${base}api/messages/%E0%A4%A`, { auth });
    expect(torn.status).toBe(400);
    expect(JSON.parse(torn.body)).toEqual({ error: { code: 'invalid_attrib', message: 'the request path is not valid' } });
    const elsewhere = await request(`${base}api/binds`, { auth, method: 'DELETE' });
    expect(elsewhere.status).toBe(404);
    expect(JSON.parse(elsewhere.body).error.code).toBe('not_found');
  });

  /** An application of its own, without callbacks: the journey test below counts acme's. */
  let quiet: Client | undefined;
  const quietClient = async (): Promise<Client> => {
    if (quiet) return quiet;
    const created = await h.hermod.cli(['apps', 'create', 'hapori', '--password', 'hapori-pw']);
    expect(created.code, created.output).toBe(0);
    quiet = createClient(h.hermod.baseUrl, h.hermod.ca(), { user: 'hapori', pass: 'hapori-pw' });
    return quiet;
  };

  it('finds a Gateway v1 message and a campaign message by the numeric ids their clients were given', async () => {
    const client = await quietClient();
    const v1 = await client.post('/rest/gateway/messages', { destination: '+64211234001', content: 'Kia ora — 你好 👋🏽' });
    expect(v1.status).toBe(201);
    const v1Id = v1.json[0] as number;
    const campaign = await client.post('/rest/campaign_manager/v1/hapori/scheduled_campaigns', {
      name: 'Te wiki o te reo Māori 🌿',
      schedule: new Date(Date.now() - 1000).toISOString().replace('Z', '+00:00'),
      content: 'Kia kaha te reo — 加油',
      members: [{ destination: '+64211234002' }],
    });
    expect(campaign.status, campaign.text).toBe(201);
    const row = await eventually(async () => {
      const r = await client.get(`/rest/campaign_manager/v1/hapori/${campaign.json.id}/report`);
      return (r.json as { message_id: number; status: string }[]).find((m) => m.status === 'received');
    }, 30_000);

    for (const [numeric, destination] of [
      [v1Id, '+64211234001'],
      [row.message_id, '+64211234002'],
    ] as const) {
      const journey = await eventually(async () => {
        const r = await request(`${base}api/messages/${numeric}`, { auth });
        const json = JSON.parse(r.body) as { destination?: string; id?: string; events?: { status: string }[] };
        return r.status === 200 && json.events?.some((e) => e.status === 'received') ? json : undefined;
      }, 30_000);
      expect(journey.destination).toBe(destination);
      expect(journey.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    }
    const unknown = await request(`${base}api/messages/${v1Id + 1_000_000_000}`, { auth });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.code).toBe('not_found');
  });

  it('counts one hand-over to the carrier for a message sent in several parts', async () => {
    const sent = await (await quietClient()).post('/rest/sms/v2/messages', {
      destination: '+64211234003',
      content: 'He roa tēnei karere — 这是一条很长的消息 🌿 '.repeat(6),
    });
    expect(sent.status).toBe(202);
    const journey = await eventually(async () => {
      const r = await request(`${base}api/messages/${sent.json.id}`, { auth });
      const json = JSON.parse(r.body) as { attempts: number; events: { status: string; attempt: number; carrierId: string }[] };
      return r.status === 200 && json.events.some((e) => e.status === 'received') ? json : undefined;
    }, 30_000);
    expect(journey.attempts, JSON.stringify(journey.events)).toBe(1);
    for (const e of journey.events.filter((e) => e.carrierId)) expect(e.attempt, JSON.stringify(e)).toBe(1);
  });

  it('refuses a campaign action without its header, so another site cannot make the browser pause one', async () => {
    const r = await request(`${base}api/campaigns/acme/1/pause`, { auth, method: 'POST' });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body).error.code).toBe('forbidden');
  });

  describe.skipIf(!chromiumInstalled())('in a real browser (Debian chromium)', () => {
    it('logs in and shows the SMS bind up and the backlog of every topic, refreshing by itself', async () => {
      await page.goto(base);
      await expect.poll(() => page.locator('#binds tbody tr', { hasText: 'sms' }).first().textContent(), { timeout: 20_000 }).toContain('up');
      await expect.poll(() => page.locator('#backlog tbody tr', { hasText: 'hermod.sms.v1' }).count()).toBe(1);
      expect(await page.locator('#backlog tbody tr', { hasText: 'hermod.status.v1' }).textContent()).toContain('core-status');
      const first = await page.locator('#refreshed').textContent();
      await expect.poll(() => page.locator('#refreshed').textContent(), { timeout: 10_000 }).not.toBe(first);
      await page.screenshot({ path: path.join(ARTIFACTS, 'console-binds.png'), fullPage: true });
    });

    it('looks up a message by id, typed and submitted with the keyboard, and shows its whole journey', async () => {
      const sent = await h.client.post('/rest/sms/v2/messages', { destination: '+64211234567', content: 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好' });
      expect(sent.status).toBe(202);
      const id = sent.json.id as string;
      await eventually(async () => ((await h.client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status === 'received' ? true : undefined), 30_000);

      await page.getByLabel('Message id').focus();
      await page.keyboard.type(id);
      await page.keyboard.press('Enter');
      const events = page.locator('#journey-events tbody tr');
      await expect.poll(() => events.count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      const rows = await events.allTextContents();
      expect(rows[0]).toContain('accepted');
      expect(rows.some((r) => r.includes('received'))).toBe(true);
      // The carrier's id for the message is on its events after the hand-over, as attempt 1.
      const carrierRow = await page.locator('#journey-events tbody tr', { hasText: 'received' }).locator('td').allTextContents();
      expect(carrierRow[2]).toBe('sms');
      expect(carrierRow[3]).not.toBe('—');
      expect(carrierRow[4]).toBe('1');
      expect(await page.locator('#journey-summary').textContent()).toContain('+64211234567');

      // Its status callbacks, appearing as the journey refreshes by itself: the receiver's 503 on the first try,
      // then its 204s; the URL shown without its credentials.
      const callbacks = page.locator('#journey-callbacks tbody tr');
      await expect
        .poll(async () => (await callbacks.allTextContents()).join('\n'), { timeout: 30_000 })
        .toMatch(/receivedhttp:\/\/localhost:\d+\/status\d+HTTP 204delivered/);
      const tries = await callbacks.allTextContents();
      expect(tries[0]).toContain('HTTP 503');
      expect(tries[0]).toContain('retry');
      expect(tries.join('\n')).toContain(`http://localhost:`);
      expect(tries.join('\n')).not.toContain('s%C4%93cret');
      const acme = page.locator('#callbacks tbody tr', { hasText: 'acme' });
      // Once the retry is delivered, nothing is owed nor waits; the one failed try stays counted.
      await expect.poll(async () => (await acme.locator('td').allTextContents()).slice(1, 6), { timeout: 10_000 }).toEqual(['0', '0', '5', '1', '0']);
      await page.screenshot({ path: path.join(ARTIFACTS, 'console-journey.png'), fullPage: true });
      // The README's picture is taken again only when asked: a test run leaves the tree as it found it.
      if (process.env.UPDATE_DOCS === '1') await page.screenshot({ path: path.join(ROOT, 'docs/console.png'), fullPage: true });
    });

    it('keeps a 4.5:1 contrast for all its text, labels every control, and is usable with the keyboard alone', async () => {
      if (page.url() !== base) await page.goto(base);
      await expect.poll(() => page.locator('#refreshed').textContent()).toMatch(/^Refreshed/);
      const low = (await page.evaluate(LOW_CONTRAST_TEXT)) as string[];
      expect(low).toEqual([]);
      for (const control of await page.locator('input, button').all()) {
        // The name a screen reader announces: its aria-label, its <label>, or its text.
        const named = await control.evaluate((e) => {
          const labels = (e as unknown as { labels?: ArrayLike<{ textContent: string | null }> }).labels;
          return e.getAttribute('aria-label') ?? labels?.[0]?.textContent ?? e.textContent ?? '';
        });
        expect(named.trim(), await control.evaluate((e) => e.outerHTML)).not.toBe('');
      }
      await page.getByLabel('Message id').focus();
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement?.textContent')).toBe('Look up');
    });

    it('pauses, resumes and cancels a running campaign by clicking its buttons', async () => {
      page.on('dialog', (d) => void d.accept());
      const members = Array.from({ length: 10_000 }, (_, n) => ({ destination: `+6422${String(n).padStart(6, '0')}`, param1: `Ānaru-${n}` }));
      const created = await h.client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
        name: 'whakamātautau — 测试',
        schedule: new Date().toISOString(),
        content: 'Kia ora {{param1}} 👋🏽',
        members,
      });
      expect(created.status).toBe(201);
      const row = page.locator('#campaigns tbody tr', { hasText: 'whakamātautau — 测试' });
      await expect.poll(() => row.locator('td').nth(2).textContent(), { timeout: 30_000 }).toBe('running');
      const stateShown = () => row.locator('td').nth(2).textContent();
      const notice = page.locator('#campaigns-notice');
      await row.getByRole('button', { name: /^Pause campaign/ }).click();
      await expect.poll(() => notice.textContent(), { timeout: 20_000 }).toBe('Campaign whakamātautau — 测试 is now paused.');
      await expect.poll(stateShown, { timeout: 20_000 }).toBe('paused');
      await row.getByRole('button', { name: /^Resume campaign/ }).click();
      await expect.poll(() => notice.textContent(), { timeout: 20_000 }).toBe('Campaign whakamātautau — 测试 is now running.');
      await expect.poll(stateShown, { timeout: 20_000 }).toBe('running');
      await row.getByRole('button', { name: /^Cancel campaign/ }).click();
      await expect.poll(() => notice.textContent(), { timeout: 20_000 }).toBe('Campaign whakamātautau — 测试 is now cancelled.');
      await expect.poll(stateShown, { timeout: 20_000 }).toBe('cancelled');
      // Cancelled before the carrier could take them all: some members were never handed over.
      const handed = Number(((await row.locator('td').nth(3).textContent()) ?? '').match(/^([\d,]+) of/)?.[1]?.replaceAll(',', ''));
      expect(handed).toBeLessThan(10_000);
      await page.screenshot({ path: path.join(ARTIFACTS, 'console-campaign-cancelled.png'), fullPage: true });
    });

    it('shows the bind down, with why, once the carrier goes away', async () => {
      await h.simulator.stop();
      const sms = page.locator('#binds tbody tr', { hasText: 'sms' }).first();
      await expect.poll(() => sms.locator('td').nth(2).textContent(), { timeout: 20_000 }).toBe('down');
      expect(await sms.locator('td').nth(5).textContent()).toMatch(/disconnected|bind failed/);
      await page.screenshot({ path: path.join(ARTIFACTS, 'console-bind-down.png'), fullPage: true });
    });
  });
});

describe('operator console without a password', () => {
  it('run alone (hermod console), exits at once and says why', async () => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/hermod.js'), 'console'], {
      cwd: ROOT,
      env: { ...process.env, HERMOD_ADMIN_PORT: '0', HERMOD_METRICS_PORT: '0', HERMOD_ADMIN_PASSWORD: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(output).toContain('operator console not started: HERMOD_ADMIN_PASSWORD is not set');
  });

  it('is not started, and the log says so', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-console-off-'));
    const hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1', HERMOD_ADMIN_PORT: '0', HERMOD_ADMIN_PASSWORD: '' } });
    try {
      // The warning goes to stderr, the ready line to stdout: the two pipes are read in no set order.
      await eventually(() => hermod.output().includes('operator console not started: HERMOD_ADMIN_PASSWORD is not set'), 10_000);
      expect(consoleUrl(hermod.output())).toBeUndefined();
    } finally {
      expect(await hermod.stop()).toBe(0);
    }
  });
});

if (!chromiumInstalled()) {
  console.warn('NOTE: operator console browser tests skipped: /usr/bin/chromium is not installed (apt-get install -y chromium; .ci/run installs it)');
}
