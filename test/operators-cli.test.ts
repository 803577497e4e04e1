import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsClient, type UpsertApplicationRequest } from '../proto/gen/hermod/v1/accounts';
import { createClient } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';

describe("operators' CLI against a running service", () => {
  let hermod: HermodProcess;

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-operators-cli-'));
    hermod = await startHermod({ dataDir, env: { HERMOD_GATEWAYS: '1' } });
  });

  afterAll(async () => {
    await hermod?.stop();
  });

  describe('callback URLs', () => {
    it('shows in apps list the callback URLs set-callbacks stored, with a password in a URL masked', async () => {
      expect((await hermod.cli(['apps', 'create', 'whakamōhio', '--password', 'x'])).code).toBe(0);
      const set = await hermod.cli([
        'apps',
        'set-callbacks',
        'whakamōhio',
        '--status',
        'https://hēmi:kupuhipa-huna@hooks.example.com/tūnga?tohu=1',
        '--reply',
        'https://hooks.example.com/whakautu',
      ]);
      expect(set.code, set.output).toBe(0);
      const listed = await hermod.cli(['apps', 'list']);
      const [head, ...rows] = listed.output.trim().split('\n');
      const columns = head!.split('\t');
      const row = rows.map((r) => r.split('\t')).find((r) => r[0] === 'whakamōhio')!;
      const cell = (name: string): string => row[columns.indexOf(name)]!;
      expect(cell('status callback')).toBe('https://h%C4%93mi:***@hooks.example.com/t%C5%ABnga?tohu=1');
      expect(cell('reply callback')).toBe('https://hooks.example.com/whakautu');
      expect(cell('im status callback')).toBe('-');
      expect(listed.output).not.toContain('kupuhipa-huna');
    });
  });

  describe('callback URLs that cannot be reached', () => {
    it('refuses a callback URL with port 0, saying so, and keeps the URL it had', async () => {
      expect((await hermod.cli(['apps', 'create', 'tauranga-0', '--password', 'x'])).code).toBe(0);
      const set = await hermod.cli(['apps', 'set-callbacks', 'tauranga-0', '--status', 'http://localhost:0/tūnga']);
      expect(set.code, set.output).not.toBe(0);
      expect(set.output).toContain('port 0');
      const listed = await hermod.cli(['apps', 'list']);
      const row = listed.output.split('\n').find((r) => r.startsWith('tauranga-0\t'));
      expect(row).not.toContain('localhost:0');
    });
  });

  describe('callback URLs on this machine or a private network', () => {
    it('warns that callbacks to localhost, loopback and private addresses are refused unless core allows them, and sets the URLs all the same', async () => {
      expect((await hermod.cli(['apps', 'create', 'kāinga', '--password', 'x'])).code).toBe(0);
      const set = await hermod.cli([
        'apps',
        'set-callbacks',
        'kāinga',
        '--status',
        'http://localhost:8080/tūnga',
        '--reply',
        'http://[::1]:8080/whakautu',
        '--im-status',
        'https://10.1.2.3/im',
      ]);
      expect(set.code, set.output).toBe(0);
      const warnings = set.stderr.split('\n').filter((line) => line.startsWith('warning: '));
      expect(warnings).toEqual([
        'warning: --status callbacks to localhost are refused unless core runs with HERMOD_CALLBACK_ALLOW_PRIVATE=true: it is this machine or a private network',
        'warning: --reply callbacks to [::1] are refused unless core runs with HERMOD_CALLBACK_ALLOW_PRIVATE=true: it is this machine or a private network',
        'warning: --im-status callbacks to 10.1.2.3 are refused unless core runs with HERMOD_CALLBACK_ALLOW_PRIVATE=true: it is this machine or a private network',
      ]);
      const row = (await hermod.cli(['apps', 'list'])).output.split('\n').find((r) => r.startsWith('kāinga\t'));
      expect(row).toContain('http://localhost:8080/tūnga');
      expect(row).toContain('http://[::1]:8080/whakautu');
      expect(row).toContain('https://10.1.2.3/im');
    });

    it('does not warn of a callback URL on a public host, and does of any loopback address in 127.0.0.0/8', async () => {
      expect((await hermod.cli(['apps', 'create', 'tūmatanui', '--password', 'x'])).code).toBe(0);
      const open = await hermod.cli(['apps', 'set-callbacks', 'tūmatanui', '--status', 'https://hooks.example.com/tūnga']);
      expect(open.code, open.output).toBe(0);
      expect(open.stderr).toBe('');
      const loopback = await hermod.cli(['apps', 'set-callbacks', 'tūmatanui', '--status', 'http://127.8.9.10:9000/tūnga']);
      expect(loopback.code, loopback.output).toBe(0);
      expect(loopback.stderr).toContain('warning: --status callbacks to 127.8.9.10 are refused unless core runs with HERMOD_CALLBACK_ALLOW_PRIVATE=true');
    });
  });

  describe('callbacks without options', () => {
    it('refuses `apps set-callbacks` given no option, saying which it takes, instead of saying it set them', async () => {
      expect((await hermod.cli(['apps', 'create', 'waea-kāinga', '--password', 'x'])).code).toBe(0);
      const set = await hermod.cli(['apps', 'set-callbacks', 'waea-kāinga']);
      expect({ code: set.code, stdout: set.stdout, stderr: set.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'error: "apps set-callbacks" needs one or more of its options: --status <url>, --reply <url>, --im-status <url>, --rotate-secret, --keep-old-secret <duration>\n',
      });
    });
  });

  describe('callback secret rotations', () => {
    /** The cell `column` of an application's row in `apps list`. */
    const listed = async (name: string, column: string): Promise<string | undefined> => {
      const [head, ...rows] = (await hermod.cli(['apps', 'list'])).stdout.trim().split('\n');
      return rows.map((r) => r.split('\t')).find((r) => r[0] === name)?.[head!.split('\t').indexOf(column)];
    };

    it('shows in apps list until when the secret a rotation replaced still signs, and nothing once a rotation ended it', async () => {
      expect((await hermod.cli(['apps', 'create', 'hēki-tawhito', '--password', 'x'])).code).toBe(0);
      expect(await listed('hēki-tawhito', 'old secret signs until')).toBe('-');
      const rotated = await hermod.cli(['apps', 'set-callbacks', 'hēki-tawhito', '--rotate-secret', '--keep-old-secret', '24h']);
      expect(rotated.code, rotated.output).toBe(0);
      const until = /also signs until (\S+)/.exec(rotated.stdout)![1]!;
      expect(Date.parse(until) - Date.now()).toBeGreaterThan(23 * 3_600_000);
      expect(await listed('hēki-tawhito', 'old secret signs until')).toBe(until);
      expect((await hermod.cli(['apps', 'set-callbacks', 'hēki-tawhito', '--rotate-secret'])).code).toBe(0);
      expect(await listed('hēki-tawhito', 'old secret signs until')).toBe('-');
    });

    it('keeps one old secret, as Stripe rolls one: a rotation while an overlap runs says which older secret stops signing now, by its first characters', async () => {
      expect((await hermod.cli(['apps', 'create', 'hēki-rua', '--password', 'x'])).code).toBe(0);
      const rotate = async (...keep: string[]) => {
        const r = await hermod.cli(['apps', 'set-callbacks', 'hēki-rua', '--rotate-secret', ...keep]);
        expect(r.code, r.output).toBe(0);
        return { out: r.stdout, secret: /signing secret: (\S+)/.exec(r.stdout)![1]!, until: /also signs until (\S+)/.exec(r.stdout)?.[1] };
      };
      const first = await rotate('--keep-old-secret', '24h');
      const second = await rotate('--keep-old-secret', '24h');
      // The secret the first rotation kept signing was replaced by the first rotation's own, which now signs beside the second's.
      const third = await rotate('--keep-old-secret', '1h');
      expect(third.out).toContain(`the secret it replaced (${second.secret.slice(0, 8)}…) also signs until ${third.until} (a second v1)`);
      expect(third.out).toContain(
        `the older secret ${first.secret.slice(0, 8)}…, which was to sign until ${second.until}, no longer signs: a receiver still on it refuses callbacks from now`,
      );
      expect(await listed('hēki-rua', 'old secret signs until')).toBe(third.until);
      // Without an overlap: the secret the rotation replaced stops at once, and so does the older one still signing.
      const fourth = await rotate();
      expect(fourth.out).toContain(`the older secret ${second.secret.slice(0, 8)}…, which was to sign until ${third.until}, no longer signs`);
      expect(fourth.out).toContain(`the secret it replaced (${third.secret.slice(0, 8)}…) no longer signs either`);
    });
  });

  describe('source addresses', () => {
    const claimsOf = async (name: string): Promise<string | undefined> => {
      const [head, ...rows] = (await hermod.cli(['apps', 'list'])).stdout.trim().split('\n');
      const row = rows.map((r) => r.split('\t')).find((r) => r[0] === name);
      return row?.[head!.split('\t').indexOf('source addresses')];
    };

    it('refuses a number written with spaces as README writes it, on standard error with exit 2, and claims none of the addresses on the line', async () => {
      expect((await hermod.cli(['apps', 'create', 'tauranga-waka', '--password', 'x'])).code).toBe(0);
      expect((await hermod.cli(['apps', 'create', 'globex', '--password', 'x'])).code).toBe(0);
      expect((await hermod.cli(['apps', 'set-sources', 'tauranga-waka', '4001'])).code).toBe(0);

      const split = await hermod.cli(['apps', 'set-sources', 'tauranga-waka', '+64', '21-555', '000']);
      expect({ code: split.code, stdout: split.stdout, stderr: split.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'error: source address "21-555" cannot be sent from: write a number without spaces or dashes: 21555 (if "+64 21-555 000" is one number: +6421555000)\n',
      });
      const quoted = await hermod.cli(['apps', 'set-sources', 'tauranga-waka', '+64 21-555 000']);
      expect(quoted.code).toBe(2);
      expect(quoted.stderr).toBe('error: source address "+64 21-555 000" cannot be sent from: write a number without spaces or dashes: +6421555000\n');
      const long = await hermod.cli(['apps', 'set-sources', 'tauranga-waka', 'GLOBEXXXXXXXXXX']);
      expect(long.code).toBe(2);
      expect(long.stderr).toBe('error: source address "GLOBEXXXXXXXXXX" cannot be sent from: an alphanumeric sender is at most 11 characters, not 15\n');
      expect(await claimsOf('tauranga-waka')).toBe('4001');

      // 000 and +64 were claimed by nobody, so another application may claim them.
      const other = await hermod.cli(['apps', 'set-sources', 'globex', '000', '+64', 'GLOBEX']);
      expect(other.code, other.output).toBe(0);
      expect(await claimsOf('globex')).toBe('000 +64 GLOBEX');
    });

    it('refuses a claim no send could use to any gRPC client, not only the CLI, and keeps the claims it had', async () => {
      expect((await hermod.cli(['apps', 'create', 'tūranga-grpc', '--password', 'x'])).code).toBe(0);
      expect((await hermod.cli(['apps', 'set-sources', 'tūranga-grpc', '4002'])).code).toBe(0);
      const client = new AccountsClient(hermod.coreAddress, credentials.createInsecure());
      const request: UpsertApplicationRequest = {
        name: 'tūranga-grpc',
        password: '',
        apiKey: '',
        revokeApiKey: false,
        rotateCallbackSecret: false,
        previousSecretValidSeconds: 0,
        sourceAddresses: { addresses: ['+6421555001', '+64 21-555 002'] },
        quota: undefined,
      };
      const err = await new Promise<ServiceError | null>((resolve) =>
        client.upsertApplication(request, new Metadata(), { deadline: Date.now() + 10_000 }, (e) => resolve(e)),
      );
      client.close();
      expect(err?.details).toBe('source address "+64 21-555 002" cannot be sent from: write a number without spaces or dashes: +6421555002');
      expect(await claimsOf('tūranga-grpc')).toBe('4002');
    });
  });

  describe('quotas', () => {
    it('says a quota of one message in the singular', async () => {
      expect((await hermod.cli(['apps', 'create', 'kotahi', '--password', 'x'])).code).toBe(0);
      const set = await hermod.cli(['apps', 'set-quota', 'kotahi', '--messages', '1', '--per', 'hour']);
      expect(set.output).toContain('quota of kotahi: 1 message per hour (UTC)');
    });
  });

  describe('application names', () => {
    it('refuses to create an application whose name has a colon, says why, and creates none', async () => {
      const created = await hermod.cli(['apps', 'create', 'co:lon', '--password', 'x']);
      expect(created.code, created.output).toBe(1);
      expect(created.output).toMatch(/^error: application name "co:lon" has a colon/m);
      expect((await hermod.cli(['apps', 'list'])).output).not.toMatch(/co:lon/);
    });

    it('refuses a name with a control character to any gRPC client, not only the CLI', async () => {
      const client = new AccountsClient(hermod.coreAddress, credentials.createInsecure());
      const request: UpsertApplicationRequest = {
        name: 'tēnā\tkoe',
        password: 'kupuhipa',
        apiKey: '',
        revokeApiKey: false,
        rotateCallbackSecret: false,
        previousSecretValidSeconds: 0,
        sourceAddresses: undefined,
        quota: undefined,
      };
      const err = await new Promise<ServiceError | null>((resolve) =>
        client.upsertApplication(request, new Metadata(), { deadline: Date.now() + 10_000 }, (e) => resolve(e)),
      );
      client.close();
      expect(err?.details).toMatch(/control character \(U\+0009\)/);
      expect((await hermod.cli(['apps', 'list'])).output).not.toMatch(/tēnā/);
    });

    it('creates applications named in te reo Māori and in Chinese, which sign in with HTTP Basic', async () => {
      for (const name of ['kāinga-ā-iwi', '商店']) {
        const created = await hermod.cli(['apps', 'create', name, '--password', 'kupuhipa-🔑']);
        expect(created.code, created.output).toBe(0);
        const client = createClient(hermod.baseUrl, hermod.ca(), { user: name, pass: 'kupuhipa-🔑' });
        const templates = await client.get(`/rest/campaign_manager/v1/${encodeURIComponent(name)}/templates`);
        client.close();
        expect(templates.status, templates.text).toBe(200);
      }
    });
  });

  describe('template names and contents', () => {
    it('refuses a template name with a tab, newline or escape, naming the character, and saves none', async () => {
      expect((await hermod.cli(['apps', 'create', 'tauira', '--password', 'x'])).code).toBe(0);
      for (const [name, codePoint] of [
        ['Hōkioi\t✨', 'U+0009'],
        ['Hōkioi\n✨', 'U+000A'],
        ['\u001b[31mwhero', 'U+001B'],
      ] as const) {
        const set = await hermod.cli(['templates', 'set', 'tauira', name, 'Tēnā koe {{param1}}']);
        expect(set.code, set.output).toBe(1);
        expect(set.output).toContain(`control character (${codePoint})`);
      }
      const listed = await hermod.cli(['templates', 'list', 'tauira']);
      expect(listed.output.trim().split('\n')).toEqual(['id\tname\tcontent']);
    });

    it('keeps a template named in any script with emoji, and lists a content of two lines on one row with the line break shown', async () => {
      const set = await hermod.cli(['templates', 'set', 'tauira', 'Hōkioi ✨ 模板', 'Tēnā koe {{param1}}\nNgā mihi — 谢谢 🙏']);
      expect(set.code, set.output).toBe(0);
      const rows = (await hermod.cli(['templates', 'list', 'tauira'])).output.trim().split('\n');
      expect(rows).toHaveLength(2);
      expect(rows[1]!.split('\t').slice(1)).toEqual(['Hōkioi ✨ 模板', 'Tēnā koe {{param1}}\\nNgā mihi — 谢谢 🙏']);
    });
  });

  describe('block list removals', () => {
    it('says an entry is not on the list it was to be removed from, with exit code 1', async () => {
      expect((await hermod.cli(['blocklist', 'add', '--app', 'acme', '+6421999'])).code).toBe(0);

      const notOnAcme = await hermod.cli(['blocklist', 'remove', '--app', 'acme', '+6421998']);
      expect(notOnAcme.code, notOnAcme.output).toBe(1);
      expect({ stdout: notOnAcme.stdout, stderr: notOnAcme.stderr }).toEqual({ stdout: '', stderr: 'error: +6421998 is not on the block list of acme\n' });
      const notGlobal = await hermod.cli(['blocklist', 'remove', '+64']);
      expect(notGlobal.code, notGlobal.output).toBe(1);
      expect(notGlobal.stderr).toBe('error: +64 is not on the global block list\n');
      expect((await hermod.cli(['blocklist', 'list', '--app', 'acme'])).output).toMatch(/^acme\t\+6421999\t/m);
    });

    it('removes an entry written with spaces and the 00 prefix', async () => {
      expect((await hermod.cli(['blocklist', 'add', '--app', 'acme', '+8190 1234'])).code).toBe(0);
      const removed = await hermod.cli(['blocklist', 'remove', '--app', 'acme', '0081 90-1234']);
      expect(removed.code, removed.output).toBe(0);
      expect(removed.output.trim()).toBe('removed from the block list of acme: +81901234');
      expect((await hermod.cli(['blocklist', 'list', '--app', 'acme'])).output).not.toMatch(/\+81901234/);
    });
  });

  describe('an application that exists already', () => {
    it('says so as the other errors do, with exit code 1', async () => {
      expect((await hermod.cli(['apps', 'create', 'marae-ā-iwi', '--password', 'tuatahi'])).code).toBe(0);
      const again = await hermod.cli(['apps', 'create', 'marae-ā-iwi', '--password', 'tuarua']);
      expect({ code: again.code, stdout: again.stdout, stderr: again.stderr }).toEqual({
        code: 1,
        stdout: '',
        stderr: 'error: application marae-ā-iwi already exists\n',
      });
    });
  });

  describe('command lines that cannot be run', () => {
    it('says in one line that an application or template name is empty, with the usage exit code', async () => {
      const app = await hermod.cli(['apps', 'create', '', '--password', 'x']);
      expect({ code: app.code, stdout: app.stdout, stderr: app.stderr }).toEqual({ code: 2, stdout: '', stderr: 'error: application name is empty\n' });
      const template = await hermod.cli(['templates', 'set', 'acme', '', 'Kia ora {{param1}} 👋🏽']);
      expect({ code: template.code, stdout: template.stdout, stderr: template.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: 'error: template name is empty\n',
      });
    });

    it('names an unknown command in one line, with the usage exit code', async () => {
      const sub = await hermod.cli(['apps', 'frob', 'acme']);
      expect({ code: sub.code, stdout: sub.stdout, stderr: sub.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: 'error: unknown command "apps frob" (hermod apps --help lists them)\n',
      });
      const top = await hermod.cli(['kōrero']);
      expect({ code: top.code, stdout: top.stdout, stderr: top.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: 'error: unknown command "kōrero" (hermod --help lists them)\n',
      });
      // Asked for its help, an unknown command is still unknown (a trial: `hermod carriers --help` printed the whole usage, exit 0).
      const help = await hermod.cli(['kōrero', '--help']);
      expect({ code: help.code, stdout: help.stdout, stderr: help.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: 'error: unknown command "kōrero" (hermod --help lists them)\n',
      });
    });

    it('refuses a misspelled option in one line, with the usage exit code, and changes nothing', async () => {
      const created = await hermod.cli(['apps', 'create', 'whare-hōu', '--pasword', 'x']);
      expect({ code: created.code, stdout: created.stdout, stderr: created.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: 'error: unknown option --pasword for "apps create" (it takes --password <pw>, --api-key)\n',
      });
      expect((await hermod.cli(['apps', 'list'])).output).not.toMatch(/^whare-hōu\t/m);

      expect((await hermod.cli(['apps', 'create', '市场', '--password', 'x'])).code).toBe(0);
      const set = await hermod.cli(['apps', 'set-callbacks', '市场', '--statuz', 'https://hooks.example.com/tūnga']);
      expect(set.code, set.output).toBe(2);
      expect(set.stdout).toBe('');
      expect(set.stderr).toMatch(/^error: unknown option --statuz for "apps set-callbacks" \(it takes --status <url>, .*\)\n$/);
      const row = (await hermod.cli(['apps', 'list'])).output.split('\n').find((r) => r.startsWith('市场\t'));
      expect(row).not.toContain('hooks.example.com');
    });

    it('shows the usage of the one command whose arguments are missing', async () => {
      const missing = await hermod.cli(['apps', 'set-password', 'acme']);
      expect(missing.code).toBe(2);
      expect(missing.stdout).toBe('');
      expect(missing.stderr).toContain('  apps set-password <name> <password>');
      expect(missing.stderr).not.toMatch(/apps create|blocklist|campaigns/);
      const campaign = await hermod.cli(['campaigns', 'pause', 'acme']);
      expect(campaign.code).toBe(2);
      expect(campaign.stderr).toContain('  campaigns pause <application> <campaign-id>');
      expect(campaign.stderr).not.toMatch(/campaigns resume|dry-run/);
    });
  });

  describe('output to a reader that stops reading', () => {
    it('ends quietly when its output pipe is closed early, as `hermod blocklist list | head -3` closes it', async () => {
      // 3,000 lines (about 130 KB): more than a pipe holds, so the CLI is still writing when the reader goes.
      const prefixes = Array.from({ length: 3000 }, (_, i) => `+6422${String(i).padStart(6, '0')}`);
      expect((await hermod.cli(['apps', 'create', 'rārangi-一覧', '--password', 'kupuhipa'])).code).toBe(0);
      const added = await hermod.cli(['blocklist', 'add', '--app', 'rārangi-一覧', ...prefixes]);
      expect(added.code, added.output.slice(0, 300)).toBe(0);

      const child = spawn(process.execPath, [path.join(import.meta.dirname, '../bin/hermod.js'), 'blocklist', 'list', '--app', 'rārangi-一覧'], {
        env: { ...process.env, HERMOD_CORE_ADDRESS: hermod.coreAddress },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let firstChunk = '';
      // head -3: read one chunk, then close the pipe's read side.
      child.stdout.once('data', (chunk: Buffer) => {
        firstChunk = chunk.toString('utf8');
        child.stdout.destroy();
      });
      let stderr = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (c: string) => (stderr += c));
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('close', (c, s) => resolve([c, s])));

      expect(firstChunk).toMatch(/^application\tprefix\tsince\n/);
      expect(stderr).not.toMatch(/Unhandled|EPIPE|Error/);
      expect(stderr).toBe('');
      expect({ code, signal }).toEqual({ code: 0, signal: null });
    });
  });
});
