import { describe, expect, it } from 'vitest';
import { createCallbackSettingsCache } from './callback-settings-cache';

describe('callback settings as the dispatcher reads them', () => {
  it('loads an application’s settings once however many tries ask at the same time', async () => {
    let loads = 0;
    const cache = createCallbackSettingsCache(async (id: string) => {
      loads++;
      await new Promise((r) => setTimeout(r, 20));
      return { statusCallbackUrl: `https://hook.example.co.nz/${id}` };
    });
    const answers = await Promise.all(Array.from({ length: 500 }, () => cache.get('kōwhai')));
    expect(loads).toBe(1);
    expect(new Set(answers.map((a) => a.statusCallbackUrl))).toEqual(new Set(['https://hook.example.co.nz/kōwhai']));
  });

  it('answers with the last value at once while a newer one loads, and keeps it when the reload fails', async () => {
    let t = 0;
    let version = 1;
    let fail = false;
    let release: (() => void) | undefined;
    const cache = createCallbackSettingsCache(
      async () => {
        if (version > 1) await new Promise<void>((r) => (release = r));
        if (fail) throw new Error('history unavailable');
        return `https://例え.jp/hook/v${version}`;
      },
      1000,
      () => t,
    );
    expect(await cache.get('快')).toBe('https://例え.jp/hook/v1');
    version = 2;
    t = 1500;
    // The reload is under way and has not answered: the last value still answers, at once.
    expect(await cache.get('快')).toBe('https://例え.jp/hook/v1');
    expect(await cache.get('快')).toBe('https://例え.jp/hook/v1');
    release!();
    await new Promise((r) => setTimeout(r, 0));
    expect(await cache.get('快')).toBe('https://例え.jp/hook/v2');
    fail = true;
    t = 3000;
    expect(await cache.get('快')).toBe('https://例え.jp/hook/v2');
    release!();
    await new Promise((r) => setTimeout(r, 0));
    expect(await cache.get('快')).toBe('https://例え.jp/hook/v2');
  });
});
