import { afterEach, describe, expect, it } from 'vitest';
import type { AuthenticateRequest } from '../../proto/gen/hermod/v1/accounts';
import { startTestGateway } from '../gateway-test-kit';

const stored = 'Kōrero Māori'.normalize('NFC');
const typed = stored.normalize('NFD');
const basic = (name: string, password: string) => `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('Campaign Manager paths naming an application with letters like ō', () => {
  it('serve the application whichever way its name was typed, in the path and in the credentials', async () => {
    const gateway = await startTestGateway(
      {
        authenticate: async (req: AuthenticateRequest) => {
          const c = req.credential;
          const ok = c?.$case === 'basic' && c.value.name.normalize('NFC') === stored && c.value.password === 'kupuhipa';
          return { ok, application: ok ? { id: 'app-1', name: stored } : undefined } as never;
        },
      },
      { campaigns: { listTemplates: async () => [{ id: 7, name: 'pōwhiri' }] as never } },
    );
    close = gateway.close;
    for (const [inPath, inCredentials] of [
      [typed, typed],
      [typed, stored],
      [stored, typed],
    ]) {
      const res = await fetch(`${gateway.url}/rest/campaign_manager/v1/${encodeURIComponent(inPath!)}/templates`, {
        headers: { authorization: basic(inCredentials!, 'kupuhipa') },
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([{ id: 7, name: 'pōwhiri' }]);
    }
    const other = await fetch(`${gateway.url}/rest/campaign_manager/v1/${encodeURIComponent('Korero Maori')}/templates`, {
      headers: { authorization: basic(typed, 'kupuhipa') },
    });
    expect(other.status).toBe(403);
  });
});
