import { describe, expect, it } from 'vitest';
import { HermodError } from '../../lib/errors';
import type { MessageRecord } from '../ports/message-history';
import { createKeyedSends } from './keyed-sends';

const record = (id: string, applicationId = 'app-1'): MessageRecord => ({
  id,
  numericId: 0,
  applicationId,
  channel: 'sms',
  direction: 'MT',
  destination: '+6421770001',
  source: '',
  content: 'Kia ora, tō tono kua tae mai 🌿',
  reference: '',
  messageClass: '',
  mask: '',
  smsClass: 0,
  scheduledAt: 0,
  integrationId: '',
  via: 'sms_v2',
  segments: 1,
  acceptedAt: 0,
  replyTo: '',
});

/** A store that records what it was given and answers each with a numeric id of its own. */
function recordingStore() {
  const stored: string[] = [];
  let next = 100;
  return {
    stored,
    store: async (records: MessageRecord[]) =>
      records.map((r) => {
        stored.push(r.id);
        return { ok: true as const, id: r.id, numericId: next++ };
      }),
  };
}

describe('keyed sends', () => {
  it('answers a keyed message history already holds with the stored one, and stores only the rest', async () => {
    const held = { ...record('k-1'), numericId: 7 };
    const sends = createKeyedSends(async (ids) => (ids.includes('k-1') ? [held] : []));
    const { stored, store } = recordingStore();
    const answers = await sends.accept([record('k-1'), record('k-2'), record('plain')], [true, true, false], store);
    expect(answers).toEqual([
      { ok: true, id: 'k-1', numericId: 7 },
      { ok: true, id: 'k-2', numericId: 100 },
      { ok: true, id: 'plain', numericId: 101 },
    ]);
    expect(stored).toEqual(['k-2', 'plain']);
  });

  it('stores a keyed message once when its retry arrives while the first try is still being stored', async () => {
    const sends = createKeyedSends(async () => []);
    const { stored, store } = recordingStore();
    let letGo!: () => void;
    const slow = async (records: MessageRecord[]) => {
      await new Promise<void>((r) => {
        letGo = r;
      });
      return store(records);
    };
    const first = sends.accept([record('k-1')], [true], slow);
    await new Promise((r) => setImmediate(r));
    const retry = sends.accept([record('k-1')], [true], store);
    letGo();
    expect(await Promise.all([first, retry])).toEqual([[{ ok: true, id: 'k-1', numericId: 100 }], [{ ok: true, id: 'k-1', numericId: 100 }]]);
    // The same key twice in one call, too.
    const both = await sends.accept([record('k-9'), record('k-9')], [true, true], store);
    expect(both[0]).toEqual(both[1]);
    expect(stored).toEqual(['k-1', 'k-9']);
  });

  it('refuses keyed messages as unavailable when history cannot say whether they are stored, and stores the unkeyed', async () => {
    const sends = createKeyedSends(async () => {
      throw new HermodError('unavailable', 'history is not answering');
    });
    const { stored, store } = recordingStore();
    const [keyed, plain] = await sends.accept([record('k-1'), record('plain')], [true, false], store);
    expect(keyed).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect((keyed as { error: HermodError }).error.message).toContain('history is not answering');
    expect(plain).toEqual({ ok: true, id: 'plain', numericId: 100 });
    expect(stored).toEqual(['plain']);
    // Nothing of the failed try is left behind: the retry looks again.
    const again = createKeyedSends(async () => []);
    expect(await again.accept([record('k-1')], [true], store)).toEqual([{ ok: true, id: 'k-1', numericId: 101 }]);
  });

  it('does not ask history about messages sent without a key', async () => {
    let asked = 0;
    const sends = createKeyedSends(async () => {
      asked += 1;
      return [];
    });
    await sends.accept([record('a'), record('b')], [false, false], recordingStore().store);
    expect(asked).toBe(0);
  });
});
