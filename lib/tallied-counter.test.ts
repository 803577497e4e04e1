import fc from 'fast-check';
import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { TalliedCounter } from './tallied-counter';

let n = 0;
const fresh = (registry = new Registry()) => {
  const name = `hermod_test_tallied_${++n}_total`;
  return {
    registry,
    tallied: new TalliedCounter({ name, help: 'test', labelNames: ['channel', 'status'] as const, registers: [registry] }),
    plain: new Counter({ name: `${name}_plain`, help: 'test', labelNames: ['channel', 'status'] as const, registers: [registry] }),
  };
};
const values = async (c: Counter<'channel' | 'status'>) =>
  (await c.get()).values.map((v) => ({ labels: v.labels, value: v.value })).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('a tallied counter', () => {
  it('reads exactly as a prom-client counter given the same increments, in any order and any labels', async () => {
    const label = fc.constantFrom('sms', 'email', 'im', 'tēnā', '👋🏽', '');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(label, label, fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined })), { maxLength: 40 }), async (incs) => {
        const { tallied, plain } = fresh();
        for (const [channel, status, by] of incs) {
          tallied.inc({ channel, status }, by);
          plain.inc({ channel, status }, by);
        }
        expect(await values(tallied)).toEqual(await values(plain));
      }),
    );
  });

  it("leaves prom-client's own values alone until they are collected: no label work at each count", async () => {
    const { tallied } = fresh();
    const own = (): object => (tallied as unknown as { hashMap: object }).hashMap;
    tallied.inc({ channel: 'sms', status: 'received' });
    tallied.inc({ channel: 'sms', status: 'received' }, 2);
    expect(own()).toEqual({});
    expect(await values(tallied)).toEqual([{ labels: { channel: 'sms', status: 'received' }, value: 3 }]);
    expect(Object.keys(own())).toHaveLength(1);
  });

  it('shows the counts on the metrics page, and keeps counting after each scrape', async () => {
    const { registry, tallied } = fresh();
    tallied.inc({ channel: 'sms', status: 'received' });
    tallied.inc({ channel: 'sms', status: 'received' }, 2);
    expect(await registry.metrics()).toMatch(/_total\{channel="sms",status="received"\} 3\n/);
    tallied.inc({ channel: 'sms', status: 'received' });
    expect(await registry.metrics()).toMatch(/_total\{channel="sms",status="received"\} 4\n/);
  });

  it('refuses what prom-client refuses: a label it does not declare, a negative or an infinite value', () => {
    const { tallied } = fresh();
    expect(() => tallied.inc({ channel: 'sms', status: 'x', other: 'y' } as never)).toThrow(/label/i);
    expect(() => tallied.inc({ channel: 'sms', status: 'x' }, -1)).toThrow(/decrease/);
    expect(() => tallied.inc({ channel: 'sms', status: 'x' }, Number.POSITIVE_INFINITY)).toThrow(/not a valid number/);
  });

  it('keeps counting, and the metrics page keeps answering, after a call with a label it does not declare', async () => {
    const { registry, tallied } = fresh();
    expect(() => tallied.inc({ channel: 'sms', status: 'x', other: 'y' } as never)).toThrow(/label/i);
    expect(() => tallied.inc({ channel: 'sms', status: 'x', other: undefined } as never)).toThrow(/label/i);
    tallied.inc({ channel: 'sms', status: 'x' });
    expect(await registry.metrics()).toMatch(/_total\{channel="sms",status="x"\} 1\n/);
    tallied.inc({ channel: 'sms', status: 'x' });
    expect(await values(tallied)).toEqual([{ labels: { channel: 'sms', status: 'x' }, value: 2 }]);
  });

  it('forgets a removed series with what it counted of it, through labels() too', async () => {
    const { tallied } = fresh();
    tallied.labels('sms', 'a').inc(5);
    tallied.inc({ channel: 'sms', status: 'b' });
    tallied.remove('sms', 'a');
    expect(await values(tallied)).toEqual([{ labels: { channel: 'sms', status: 'b' }, value: 1 }]);
  });

  it('forgets what it counted when reset', async () => {
    const { tallied } = fresh();
    tallied.inc({ channel: 'sms', status: 'sent' }, 5);
    tallied.reset();
    tallied.inc({ channel: 'sms', status: 'sent' });
    expect(await values(tallied)).toEqual([{ labels: { channel: 'sms', status: 'sent' }, value: 1 }]);
  });
});
