import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ReadGauge } from './read-gauge';

describe('a gauge read when it is collected', () => {
  it('shows what each watched series reads at every scrape, and drops a series once unwatched', async () => {
    const registry = new Registry();
    const gauge = new ReadGauge({ name: 'test_window_in_use', help: 'h', labelNames: ['bind'] as const, registers: [registry] });
    let window = 3;
    const unwatch = gauge.watch({ bind: 'hermod@smsc.example.nz:2775' }, () => window);
    gauge.watch({ bind: 'hermod@smsc.example.nz:2775#2' }, () => 7);
    window = 250;
    const values = async () => Object.fromEntries((await gauge.get()).values.map((v) => [v.labels.bind, v.value]));
    expect(await values()).toEqual({ 'hermod@smsc.example.nz:2775': 250, 'hermod@smsc.example.nz:2775#2': 7 });
    window = 0;
    expect(await registry.metrics()).toContain('test_window_in_use{bind="hermod@smsc.example.nz:2775"} 0');
    unwatch();
    expect(await values()).toEqual({ 'hermod@smsc.example.nz:2775#2': 7 });
  });
});
