import { describe, expect, it } from 'vitest';
import { createFairSlots, type TakeTurns } from './fair-slots';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('fair slots', () => {
  it('let a key that arrives later run after one step of the work ahead of it, not after all of it', async () => {
    const slots = createFairSlots(2);
    const order: string[] = [];
    const steps = async (name: string, n: number, turn: TakeTurns) => {
      for (let i = 0; i < n; i++) {
        order.push(`${name}${i}`);
        await tick();
        await turn();
      }
    };
    // A big campaign's six partitions of ten pages each, then a small one of another tenant.
    const big = Array.from({ length: 6 }, (_, p) => slots.run('nui', (turn) => steps(`nui-p${p}-`, 10, turn)));
    await tick();
    const small = slots.run('iti', (turn) => steps('iti-', 2, turn));
    await Promise.all([...big, small]);
    const firstSmall = order.indexOf('iti-0');
    // Started within a step or two of each running partition, not after 60 pages.
    expect(firstSmall).toBeLessThan(6);
    expect(order.filter((s) => s.startsWith('nui')).length).toBe(60);
  });

  it('never run more than the limit at once, and give a freed slot to a started piece before a fresh one of the same key', async () => {
    const slots = createFairSlots(2);
    let now = 0;
    let most = 0;
    const starts: string[] = [];
    const piece = (key: string, name: string) =>
      slots.run(key, async (turn) => {
        starts.push(name);
        for (let i = 0; i < 3; i++) {
          now++;
          most = Math.max(most, now);
          await tick();
          now--;
          await turn();
        }
      });
    await Promise.all([piece('a', 'a1'), piece('a', 'a2'), piece('a', 'a3'), piece('b', 'b1'), piece('a', 'a4')]);
    expect(most).toBeLessThanOrEqual(2);
    expect(slots.held('a') + slots.held('b')).toBe(0);
    // a3 and a4 start only after a1 and a2 (which gave way to b1, then came back first) are done.
    expect(starts.indexOf('a3')).toBeGreaterThan(starts.indexOf('b1'));
  });

  it('let a third key in within a step or two while two long queues share the slots', async () => {
    const slots = createFairSlots(2);
    const order: string[] = [];
    const steps = (name: string, n: number) => async (turn: TakeTurns) => {
      for (let i = 0; i < n; i++) {
        order.push(name);
        await tick();
        await turn();
      }
    };
    const a = Array.from({ length: 10 }, () => slots.run('a', steps('a', 5)));
    const b = Array.from({ length: 10 }, () => slots.run('b', steps('b', 5)));
    for (let i = 0; i < 6; i++) await tick();
    const before = order.length;
    const c = slots.run('c', steps('c', 2));
    await Promise.all([...a, ...b, c]);
    expect(order.indexOf('c') - before).toBeLessThanOrEqual(3);
  });

  it('give a slot back when the work fails', async () => {
    const slots = createFairSlots(1);
    await expect(slots.run('x', async () => Promise.reject(new Error('kāore')))).rejects.toThrow('kāore');
    expect(await slots.run('y', async () => 'āe')).toBe('āe');
  });
});
