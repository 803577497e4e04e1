import { describe, expect, it } from 'vitest';
import { cachedResolver } from './cached-resolver';

describe('cachedResolver', () => {
  const counting = (answer: (host: string) => string[] | Error) => {
    const asked: string[] = [];
    const resolve = async (host: string): Promise<string[]> => {
      asked.push(host);
      await new Promise((r) => setTimeout(r, 5));
      const a = answer(host);
      if (a instanceof Error) throw a;
      return a;
    };
    return { resolve, asked };
  };

  it('asks the resolver once for a thousand callbacks to one receiver within its time to live', async () => {
    const { resolve, asked } = counting(() => ['203.0.113.7']);
    let t = 0;
    const cached = cachedResolver(resolve, { ttlMs: 30_000, now: () => t });
    const answers = await Promise.all(Array.from({ length: 1000 }, () => cached('hooks.tāmaki.example')));
    t = 29_999;
    answers.push(await cached('hooks.tāmaki.example'));
    expect(asked).toEqual(['hooks.tāmaki.example']);
    expect(new Set(answers.map((a) => a.join()))).toEqual(new Set(['203.0.113.7']));
  });

  it('asks again once the answer is older than its time to live, and uses the new answer', async () => {
    let address = '203.0.113.7';
    const { resolve, asked } = counting(() => [address]);
    let t = 0;
    const cached = cachedResolver(resolve, { ttlMs: 30_000, now: () => t });
    expect(await cached('hooks.example.com')).toEqual(['203.0.113.7']);
    address = '198.51.100.9';
    t = 30_001;
    expect(await cached('hooks.example.com')).toEqual(['198.51.100.9']);
    expect(asked).toHaveLength(2);
  });

  it('keeps no failure: a name that did not resolve is asked again at the next callback', async () => {
    let fail = true;
    const { resolve, asked } = counting(() => (fail ? Object.assign(new Error('getaddrinfo EAI_AGAIN 例え.jp'), { code: 'EAI_AGAIN' }) : ['192.0.2.1']));
    const cached = cachedResolver(resolve, { ttlMs: 30_000, now: () => 0 });
    await expect(cached('例え.jp')).rejects.toThrow('EAI_AGAIN');
    fail = false;
    expect(await cached('例え.jp')).toEqual(['192.0.2.1']);
    expect(asked).toHaveLength(2);
  });

  it('keeps each name apart, and holds no more names than it is allowed', async () => {
    const { resolve, asked } = counting((host) => [`192.0.2.${host.length}`]);
    const cached = cachedResolver(resolve, { ttlMs: 30_000, maxNames: 2, now: () => 0 });
    expect(await cached('a.example')).toEqual(['192.0.2.9']);
    expect(await cached('bb.example')).toEqual(['192.0.2.10']);
    expect(await cached('ccc.example')).toEqual(['192.0.2.11']);
    // The oldest name made room for the newest: it is asked again.
    expect(await cached('a.example')).toEqual(['192.0.2.9']);
    expect(asked).toEqual(['a.example', 'bb.example', 'ccc.example', 'a.example']);
  });
});
