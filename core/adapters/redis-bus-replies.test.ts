import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { streamKey } from './redis-bus-keys';
import { deliveredRecord, deliveryCounts, groupBacklog, lastEntryId, othersHoldPending, parseStreams, type StreamReply } from './redis-bus-replies';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from '../../test/support/redis-keys';

/** Text people send: any code point, whole graphemes, and the scripts our users write in. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉', 'line one\nline two', ''),
);
const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');
const entryId = fc.tuple(fc.nat(), fc.nat()).map(([ms, seq]) => `${ms}-${seq}`);
const entry = fc.record({ id: entryId, fields: fc.option(fc.array(text, { maxLength: 6 }).map((fields) => fields.map(bytes))) });
const streams: fc.Arbitrary<StreamReply[]> = fc.uniqueArray(
  fc.record({
    key: fc
      .tuple(fc.constantFrom('hermod', 'hermod-tēnā', 'ō'), fc.constantFrom('hermod.sms.v1', 'hermod.網.v1', 'hermod.👋🏽.v1'), fc.nat(63))
      .map(([prefix, topic, p]) => streamKey(prefix, topic, p)),
    entries: fc.array(entry, { maxLength: 5 }),
  }),
  { selector: (s) => s.key, minLength: 1, maxLength: 4 },
);

/** A reply as the server would send it, the stream key and entry id as bytes like any binary reply. */
const wire = (s: StreamReply): [Buffer, [Buffer, Buffer[] | null][]] => [bytes(s.key), s.entries.map((e) => [bytes(e.id), e.fields])];

describe('reading XREADGROUP replies', () => {
  it('reads the same streams and entries from a RESP2 reply, a flat RESP3 reply and a map, in any script', () => {
    fc.assert(
      fc.property(streams, (expected) => {
        const resp2 = expected.map(wire);
        const flat = resp2.flat();
        const map = new Map(resp2.map(([key, entries]) => [key.toString(), entries]));
        const object = Object.fromEntries(map);
        for (const reply of [resp2, flat, map, object]) expect(parseStreams(reply)).toEqual(expected);
      }),
    );
  });

  it('reads no streams from a reply that timed out or is not a reply at all', () => {
    for (const reply of [null, undefined, [], 'OK', 42]) expect(parseStreams(reply)).toEqual([]);
  });

  it('turns an entry into the record it carries, whatever the order of its fields and whatever else it holds', () => {
    fc.assert(
      fc.property(text, fc.uint8Array({ maxLength: 64 }), fc.boolean(), fc.nat(9), (key, value, valueFirst, redeliveries) => {
        const k = [bytes('k'), bytes(key)];
        const v = [bytes('v'), Buffer.from(value)];
        const fields = [bytes('extra'), bytes('Kia ora 👋🏽'), ...(valueFirst ? [...v, ...k] : [...k, ...v])];
        expect(deliveredRecord('hermod.sms.v1', 3, '17-2', fields, redeliveries)).toEqual({
          key,
          value: Buffer.from(value),
          topic: 'hermod.sms.v1',
          partition: 3,
          offset: '17-2',
          redeliveries,
        });
      }),
    );
  });

  it('gives an entry without a key or value an empty one', () => {
    expect(deliveredRecord('t', 0, '1-0', [], 0)).toMatchObject({ key: '', value: Buffer.alloc(0) });
  });

  describe('from a real Redis', () => {
    const redis = new Redis(REDIS_URL);
    const prefix = randomPrefix();
    afterAll(async () => {
      await deleteRedisKeys(prefix);
      redis.disconnect();
    });

    it('gets back the key and value bytes published, te reo Māori, emoji and CJK alike', async () => {
      const key = streamKey(prefix, 'hermod.网关.v1', 0);
      const sent = [
        { key: 'tēnā-koe', value: 'Kia ora, e hoa mā — tēnā koe' },
        { key: '👋🏽', value: '你好世界 👋🏽' },
      ];
      for (const r of sent) await redis.xadd(key, '*', 'k', r.key, 'v', r.value);
      await redis.xgroup('CREATE', key, 'g', '0');
      const reply = await redis.xreadgroupBuffer('GROUP', 'g', 'c', 'COUNT', 10, 'STREAMS', key, '>');
      const [stream] = parseStreams(reply);
      expect(stream?.key).toBe(key);
      const records = stream!.entries.map((e) => deliveredRecord('hermod.网关.v1', 0, e.id, e.fields!, 0));
      expect(records.map((r) => ({ key: r.key, value: r.value.toString('utf8') }))).toEqual(sent);
    });
  });
});

describe('reading XPENDING and XINFO replies', () => {
  it('counts deliveries per entry id from an extended XPENDING reply', () => {
    const counts = deliveryCounts([
      ['1-0', 'consumer-ā', 120, 1],
      ['2-0', 'consumer-ā', 80, 4],
    ]);
    expect([...counts]).toEqual([
      ['1-0', 1],
      ['2-0', 4],
    ]);
    expect(deliveryCounts(null).size).toBe(0);
  });

  it('tells whether another consumer holds pending entries, from a summary XPENDING reply', () => {
    expect(
      othersHoldPending(
        [
          3,
          '1-0',
          '3-0',
          [
            ['mā', '2'],
            ['koe', '1'],
          ],
        ],
        'mā',
      ),
    ).toBe(true);
    expect(othersHoldPending([2, '1-0', '2-0', [['mā', '2']]], 'mā')).toBe(false);
    expect(othersHoldPending([0, null, null, null], 'mā')).toBe(false);
  });

  it('adds up what a group has not read and what it has not acknowledged, ignoring other groups', () => {
    const groups = [
      ['name', 'hōkai', 'consumers', 1, 'pending', 2, 'last-delivered-id', '5-0', 'entries-read', 5, 'lag', 3],
      ['name', 'other', 'consumers', 1, 'pending', 7, 'last-delivered-id', '5-0', 'entries-read', 5, 'lag', 9],
    ];
    expect(groupBacklog(groups, 'hōkai')).toBe(5);
    expect(groupBacklog(groups, 'absent')).toBeUndefined();
    expect(groupBacklog(null, 'hōkai')).toBe(0);
  });

  it('counts nothing unread for a group that has read the stream’s last entry, and never more than the stream holds: Redis’s lag after a restart from its append-only file said 226 of an empty stream, for good (trial)', () => {
    const afterRestart = [['name', 'sms-workers', 'consumers', 2, 'pending', 3, 'last-delivered-id', '1700000000675-0', 'entries-read', 675, 'lag', 226]];
    // Busy and caught up: its last entry read, three in hand.
    expect(groupBacklog(afterRestart, 'sms-workers', 900, '1700000000675-0')).toBe(3);
    // Behind: what Redis says, but no more than the stream holds.
    expect(groupBacklog(afterRestart, 'sms-workers', 40, '1700000000699-3')).toBe(40);
    expect(groupBacklog(afterRestart, 'sms-workers', 900, '1700000000699-3')).toBe(229);
    // Empty: nothing.
    expect(groupBacklog(afterRestart, 'sms-workers', 0, '0-0')).toBe(3);
    // A lag Redis cannot tell (nil): what the group holds, as before.
    const unknown = [['name', 'sms-workers', 'consumers', 1, 'pending', 3, 'last-delivered-id', '9-0', 'entries-read', null, 'lag', null]];
    expect(groupBacklog(unknown, 'sms-workers', 12, '12-0')).toBe(3);
    expect(lastEntryId([['1700000000675-0', ['k', 'k', 'v', 'x']]])).toBe('1700000000675-0');
    expect(lastEntryId([])).toBeUndefined();
  });
});
