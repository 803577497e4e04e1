import { describe, expect, it, vi } from 'vitest';
import { HermodError } from '../lib/errors';
import { createAuthenticator } from './auth';
import type { CoreClient } from './core-client';

const HEADER = 'Basic ' + Buffer.from('tāne:pūtea-secret').toString('base64');

/** Core's Authenticate, answered only when the test says so (as a core busy under load would). */
function slowCore() {
  const answers: ((ok: boolean) => void)[] = [];
  const core = {
    authenticate: vi.fn(
      () => new Promise((resolve) => answers.push((ok) => resolve(ok ? { ok: true, application: { id: 'app-1', name: 'tāne' } } : { ok: false }))),
    ),
  } as unknown as CoreClient;
  return { core, answer: (ok: boolean) => answers.shift()!(ok), calls: () => (core.authenticate as ReturnType<typeof vi.fn>).mock.calls.length };
}

describe('credential cache of a gateway', () => {
  it('keeps serving a client whose cached check has expired while core is slow to check it again', async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const { core, answer, calls } = slowCore();
      const auth = createAuthenticator(core, 1000, 60_000);
      const first = auth.authenticate(HEADER, '127.0.0.1');
      answer(true);
      expect(await first).toEqual({ applicationId: 'app-1', applicationName: 'tāne' });
      vi.setSystemTime(5000);
      // Core does not answer the new check yet; requests are not held behind it.
      expect(await auth.authenticate(HEADER, '127.0.0.1')).toEqual({ applicationId: 'app-1', applicationName: 'tāne' });
      expect(await auth.authenticate(HEADER, '127.0.0.1')).toEqual({ applicationId: 'app-1', applicationName: 'tāne' });
      expect(calls()).toBe(2);
      answer(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses at once when the check made in the background finds the password changed', async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const { core, answer } = slowCore();
      const auth = createAuthenticator(core, 1000, 60_000);
      const first = auth.authenticate(HEADER, '127.0.0.1');
      answer(true);
      await first;
      vi.setSystemTime(5000);
      await auth.authenticate(HEADER, '127.0.0.1');
      answer(false);
      for (let i = 0; i < 5; i++) await Promise.resolve();
      // The entry is gone: the next request is checked, not served from the cache.
      const refused = auth.authenticate(HEADER, '127.0.0.1').then(
        () => 'served',
        (e: unknown) => e,
      );
      answer(false);
      expect(await refused).toBeInstanceOf(HermodError);
    } finally {
      vi.useRealTimers();
    }
  });

  it('waits for a new check once the cached one is too old to serve', async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const { core, answer } = slowCore();
      const auth = createAuthenticator(core, 1000, 10_000);
      const first = auth.authenticate(HEADER, '127.0.0.1');
      answer(true);
      await first;
      vi.setSystemTime(20_000);
      let settled = false;
      const again = auth.authenticate(HEADER, '127.0.0.1').then(() => (settled = true));
      await Promise.resolve();
      expect(settled).toBe(false);
      answer(true);
      await again;
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a revoked API key at a gateway', () => {
  it('stops working within seconds, not the minute a password check is cached: a key is cheap to check again', async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      let revoked = false;
      const core = {
        authenticate: vi.fn(async () => (revoked ? { ok: false } : { ok: true, application: { id: 'app-1', name: 'tāne' } })),
      } as unknown as CoreClient;
      const auth = createAuthenticator(core, 60_000);
      const key = 'Bearer hmd_kī-matua-🔑';
      expect(await auth.authenticate(key, '127.0.0.1', true)).toEqual({ applicationId: 'app-1', applicationName: 'tāne' });
      expect(await auth.authenticate(HEADER, '127.0.0.1')).toEqual({ applicationId: 'app-1', applicationName: 'tāne' });
      revoked = true; // hermod keys revoke (and, here, a password change)
      vi.setSystemTime(6_000);
      // The first request after the key's short cache ran out is served while it is checked again; the next is refused.
      await auth.authenticate(key, '127.0.0.1', true).catch(() => undefined);
      for (let i = 0; i < 5; i++) await Promise.resolve();
      await expect(auth.authenticate(key, '127.0.0.1', true)).rejects.toMatchObject({ code: 'unauthorized' });
      // From a core that names no stored password by a tag, a password's check stays cached its minute
      // (each full check costs core a quarter of a second of a thread).
      expect(await auth.authenticate(HEADER, '127.0.0.1')).toEqual({ applicationId: 'app-1', applicationName: 'tāne' });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a changed password at a gateway', () => {
  /** Core keeping tāne's password, naming the stored one by a tag, and counting full password checks (the costly ones). */
  const tagCore = () => {
    let password = 'pūtea-secret';
    let tag = 'tūtohu-1';
    let fullChecks = 0;
    const authenticate = vi.fn(async (req: { credential: { $case: string; value: { password?: string; passwordTag?: string } } }) => {
      const c = req.credential;
      const ok = c.$case === 'basic' ? (fullChecks++, c.value.password === password) : c.value.passwordTag === tag;
      return ok ? { ok: true, application: { id: 'app-1', name: 'tāne' }, passwordTag: tag } : { ok: false, application: undefined, passwordTag: '' };
    });
    return {
      core: { authenticate } as unknown as CoreClient,
      change: (to: string) => {
        password = to;
        tag = 'tūtohu-2';
      },
      fullChecks: () => fullChecks,
    };
  };

  it('is not served from a check older than two recheck periods: a burst after a quiet spell waits for the recheck and is refused', async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const { core, change } = tagCore();
      const auth = createAuthenticator(core, 60_000);
      await auth.authenticate(HEADER, '127.0.0.1');
      change('kupu-hou-🔐');
      vi.setSystemTime(11_000);
      const burst = await Promise.allSettled(Array.from({ length: 20 }, () => auth.authenticate(HEADER, '127.0.0.1')));
      expect(burst.map((r) => r.status)).toEqual(Array(20).fill('rejected'));
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops being served the moment the recheck finds the tag changed, while the old password is still being checked in full', async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const { core: tagged, change } = tagCore();
      let release!: () => void;
      const slowFull = new Promise<void>((resolve) => (release = resolve));
      let checks = 0;
      const core = {
        // The first check answers at once; a full check after the change takes as long as scrypt on a busy core.
        authenticate: async (req: { credential: { $case: string } }) => {
          if (req.credential.$case === 'basic' && checks++ > 0) await slowFull;
          return tagged.authenticate(req as never);
        },
      } as unknown as CoreClient;
      const auth = createAuthenticator(core, 60_000);
      await auth.authenticate(HEADER, '127.0.0.1');
      change('kupu-hou-🔐');
      vi.setSystemTime(6_000);
      // Due for its recheck: this one request is served from the old check while the recheck is asked.
      await auth.authenticate(HEADER, '127.0.0.1');
      for (let i = 0; i < 10; i++) await Promise.resolve();
      let served = 0;
      const burst = Array.from({ length: 20 }, () => auth.authenticate(HEADER, '127.0.0.1').then(() => served++));
      for (let i = 0; i < 10; i++) await Promise.resolve();
      expect(served).toBe(0);
      release();
      expect((await Promise.allSettled(burst)).map((r) => r.status)).toEqual(Array(20).fill('rejected'));
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops working within seconds, as a revoked key does, and the checks again in between hash no password', async () => {
    vi.useFakeTimers({ now: 0 });
    try {
      const { core, change, fullChecks } = tagCore();
      const auth = createAuthenticator(core, 60_000);
      const tane = { applicationId: 'app-1', applicationName: 'tāne' };
      expect(await auth.authenticate(HEADER, '127.0.0.1')).toEqual(tane);
      expect(fullChecks()).toBe(1);
      // Asked again every few seconds by the tag: still the same password, and no hash computed for it.
      for (const at of [6_000, 12_000, 18_000]) {
        vi.setSystemTime(at);
        expect(await auth.authenticate(HEADER, '127.0.0.1')).toEqual(tane);
        for (let i = 0; i < 5; i++) await Promise.resolve();
      }
      expect(fullChecks()).toBe(1);
      change('kupu-hou-🔐');
      vi.setSystemTime(24_000);
      // The first request after the recheck is due is served while it is asked; the tag no longer matches, the old
      // password is checked in full and refused, and the next request is refused.
      await auth.authenticate(HEADER, '127.0.0.1').catch(() => undefined);
      for (let i = 0; i < 10; i++) await Promise.resolve();
      await expect(auth.authenticate(HEADER, '127.0.0.1')).rejects.toMatchObject({ code: 'unauthorized' });
      const changed = 'Basic ' + Buffer.from('tāne:kupu-hou-🔐').toString('base64');
      expect(await auth.authenticate(changed, '127.0.0.1')).toEqual(tane);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('wrong passwords at a gateway', () => {
  const header = (password: string) => 'Basic ' + Buffer.from(`kāinga-ā-iwi:${password}`).toString('base64');
  /** Core that knows kāinga-ā-iwi's password pā💥, and counts what it is asked. */
  const core = () => {
    const authenticate = vi.fn(async (req: { credential: { value: { password: string } } }) =>
      req.credential.value.password === 'pā💥' ? { ok: true, application: { id: 'app-1', name: 'kāinga-ā-iwi' } } : { ok: false },
    );
    return { core: { authenticate } as unknown as CoreClient, calls: () => authenticate.mock.calls.length };
  };
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'served',
      (e: HermodError) => e.code,
    );

  it('are refused without asking core once the application has failed too often from that address, the right password too; another address is asked', async () => {
    const { core: c, calls } = core();
    const auth = createAuthenticator(c, 60_000);
    for (let i = 0; i < 5; i++) expect(await outcome(auth.authenticate(header(`pā-${i}`), '192.0.2.1'))).toBe('unauthorized');
    expect(calls()).toBe(5);
    const refused = await auth.authenticate(header('pā💥'), '192.0.2.1').catch((e: HermodError) => e);
    expect(refused).toMatchObject({ code: 'too_many_auth_failures', retryAfterSeconds: 10 });
    expect(calls()).toBe(5);
    expect(await outcome(auth.authenticate(header('pā💥'), '198.51.100.7'))).toBe('served');
    expect(calls()).toBe(6);
  });

  it('from one address in parallel, for made-up names, reach core no more than the address allowance plus a few at once (trial: 143 of 300 reached core and stalled every tenant)', async () => {
    let inFlight = 0;
    let most = 0;
    const authenticate = vi.fn(async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 5)); // a password hash
      inFlight--;
      return { ok: false };
    });
    const auth = createAuthenticator({ authenticate } as unknown as CoreClient, 60_000);
    const guesses = Array.from({ length: 300 }, (_, i) =>
      outcome(auth.authenticate('Basic ' + Buffer.from(`ingoa-${i}-💥:x`).toString('base64'), '192.0.2.45')),
    );
    const outcomes = await Promise.all(guesses);
    expect(authenticate.mock.calls.length).toBeLessThanOrEqual(20 + 8);
    expect(most).toBeLessThanOrEqual(8);
    expect(outcomes.filter((o) => o === 'unauthorized').length).toBe(authenticate.mock.calls.length);
    expect(outcomes.filter((o) => o !== 'unauthorized').every((o) => o === 'too_many_auth_failures')).toBe(true);
  });

  it('from one address for many applications at once (a gateway restarted behind a load balancer) all go through, a few at a time', async () => {
    let inFlight = 0;
    let most = 0;
    const authenticate = vi.fn(async (req: { credential: { value: { name: string } } }) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return { ok: true, application: { id: req.credential.value.name, name: req.credential.value.name } };
    });
    const auth = createAuthenticator({ authenticate } as unknown as CoreClient, 60_000);
    const logins = Array.from({ length: 50 }, (_, i) => outcome(auth.authenticate('Basic ' + Buffer.from(`tono-${i}-快:pā💥`).toString('base64'), '10.0.0.1')));
    expect(await Promise.all(logins)).toEqual(Array(50).fill('served'));
    expect(most).toBeLessThanOrEqual(8);
  });

  it('do not stop a client whose right password is cached from being served', async () => {
    const { core: c, calls } = core();
    const auth = createAuthenticator(c, 60_000);
    expect(await outcome(auth.authenticate(header('pā💥'), '192.0.2.1'))).toBe('served');
    for (let i = 0; i < 6; i++) await outcome(auth.authenticate(header(`pā-${i}`), '203.0.113.5'));
    expect(await outcome(auth.authenticate(header('pā-x'), '203.0.113.5'))).toBe('too_many_auth_failures');
    expect(await outcome(auth.authenticate(header('pā💥'), '192.0.2.1'))).toBe('served');
    expect(calls()).toBe(6);
  });
  it('refuse the right password from an address in back-off even while another client keeps it cached, so guessing learns nothing (security trial)', async () => {
    const { core: c } = core();
    const auth = createAuthenticator(c, 60_000);
    // The application's own client, busy from its own address: its header stays cached.
    expect(await outcome(auth.authenticate(header('pā💥'), '192.0.2.1'))).toBe('served');
    const guesses: string[] = [];
    for (let i = 0; i < 40; i++) guesses.push(await outcome(auth.authenticate(header(i === 30 ? 'pā💥' : `pā-${i}`), '203.0.113.5')));
    // Five wrong ones answered 401, then every guess 429, the right one among them: no answer tells it apart.
    expect(guesses.slice(0, 5)).toEqual(Array(5).fill('unauthorized'));
    expect(new Set(guesses.slice(5))).toEqual(new Set(['too_many_auth_failures']));
    expect(await outcome(auth.authenticate(header('pā💥'), '192.0.2.1'))).toBe('served');
  });
  it('keep serving a cached header to an address it was served to before that address went into back-off (review: a password rotation behind one NAT)', async () => {
    const { core: c } = core();
    const auth = createAuthenticator(c, 60_000);
    const nat = '198.51.100.9';
    // Instances already on the new password, behind the NAT; the others still try the old one from the same address.
    expect(await outcome(auth.authenticate(header('pā💥'), nat))).toBe('served');
    for (let i = 0; i < 6; i++) expect(await outcome(auth.authenticate(header(`pā-${i}`), nat))).not.toBe('served');
    expect(await outcome(auth.authenticate(header('pā💥'), nat))).toBe('served');
    // A guess of the same right password from another address in back-off learns nothing.
    for (let i = 0; i < 6; i++) await outcome(auth.authenticate(header(`pā-${i}`), '203.0.113.5'));
    expect(await outcome(auth.authenticate(header('pā💥'), '203.0.113.5'))).toBe('too_many_auth_failures');
  });
});
