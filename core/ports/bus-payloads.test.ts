import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { type BusValue, type DeliveredRecord, valueBytes } from './bus';
import { createMemoryBus } from '../adapters/memory-bus';
import {
  BUS_PAYLOAD_SCHEMAS,
  decodeInbound,
  decodeJob,
  decodeRecords,
  decodeStatus,
  encodeInbound,
  encodeJob,
  encodeStatus,
  type InboundPayload,
  type OutboundJob,
  type StatusUpdate,
} from './bus-payloads';

const KIA_ORA = 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好世界';

describe("the bus payloads' schemas", () => {
  it.each(Object.entries(BUS_PAYLOAD_SCHEMAS))('are valid JSON Schema 2020-12: %s (a process does not check them again as it starts)', (_kind, schema) => {
    const ajv = new Ajv2020();
    const valid = ajv.validateSchema(schema);
    expect(ajv.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });
});

const job: OutboundJob = {
  id: '0b7d6c1e-3f0a-4c2b-9d1e-5a6b7c8d9e0f',
  applicationId: 'app-ā',
  channel: 'wab',
  destination: '+64211234561',
  source: 'Tāmaki',
  content: KIA_ORA,
  acceptedAt: 1_700_000_000_123,
  im: {
    type: 'template',
    template: { id: 't-1', name: 'whakatau', language: 'mi', parameters: [{ name: 'ingoa', text: 'Mere 🌿' }] },
    subject: 'Tēnā koe',
    reference: '参考-42',
  },
};
const status: StatusUpdate = {
  id: job.id,
  status: 'rejected',
  at: 1_700_000_001_000,
  carrierId: 'wamid.ā1',
  errorCode: 'carrier_rejected',
  detail: 'WhatsApp: “kāore” 🙅🏽',
  channel: 'wab',
};
const inbound: InboundPayload = { source: '+64211234561', destination: '4321', text: KIA_ORA, at: 1_700_000_002_000, channel: 'sms', carrierRef: 'ref-1' };

const wire = (value: BusValue): Record<string, unknown> => JSON.parse(valueBytes(value).toString('utf8'));
const refusal = (decode: () => unknown): HermodError => {
  try {
    decode();
  } catch (err) {
    expect(err).toBeInstanceOf(HermodError);
    return err as HermodError;
  }
  throw new Error('decoded what should have been refused');
};

/** The bytes as another process reads them: a Buffer of its own, not the one encoded here. */
const overTheWire = (value: BusValue): Buffer => Buffer.from(valueBytes(value));

const text = fc.string({ unit: 'grapheme', maxLength: 30 });
const jobArb: fc.Arbitrary<OutboundJob> = fc.record(
  {
    id: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 36 }),
    applicationId: text,
    channel: fc.constantFrom('sms', 'wab', 'rcs', 'email', 'mms'),
    destination: text,
    source: text,
    content: text,
    acceptedAt: fc.integer({ min: 0, max: 4_102_444_800_000 }),
    im: fc.record(
      {
        type: fc.constantFrom('text' as const, 'media' as const, 'template' as const),
        media: fc.record({ mimeType: text, url: text }),
        template: fc.record({ id: text, name: text, language: text, parameters: fc.array(fc.record({ name: text, text }), { maxLength: 3 }) }),
        subject: text,
        reference: text,
      },
      { requiredKeys: ['type'] },
    ),
    trace: text,
  },
  { requiredKeys: ['id', 'applicationId', 'channel', 'destination', 'source', 'content', 'acceptedAt'] },
);
const statusArb: fc.Arbitrary<StatusUpdate> = fc.record(
  {
    id: text,
    status: fc.constantFrom('accepted' as const, 'submitted' as const, 'received' as const, 'failed' as const),
    at: fc.integer({ min: 0, max: 4_102_444_800_000 }),
    carrierId: text,
    partCarrierIds: fc.array(text, { maxLength: 9 }),
    errorCode: text,
    detail: text,
    channel: text,
    trace: text,
  },
  { requiredKeys: ['id', 'status', 'at', 'channel'] },
);
const inboundArb: fc.Arbitrary<InboundPayload> = fc.record(
  { source: text, destination: text, text, at: fc.integer({ min: 0, max: 4_102_444_800_000 }), channel: text, carrierRef: text, businessId: text },
  { requiredKeys: ['source', 'destination', 'text', 'at', 'channel'] },
);

describe('the bus contract between core and the workers', () => {
  it('round-trips jobs, status updates and inbound messages in any script, each marked version 1 on the wire', () => {
    expect(decodeJob(overTheWire(encodeJob(job)))).toEqual(job);
    expect(decodeStatus(overTheWire(encodeStatus(status)))).toEqual(status);
    const longSubmitted: StatusUpdate = { ...status, status: 'submitted', carrierId: 'smsc:0001', partCarrierIds: ['smsc:0002', 'smsc:ā3'] };
    expect(decodeStatus(overTheWire(encodeStatus(longSubmitted)))).toEqual(longSubmitted);
    expect(decodeStatus(encodeStatus(longSubmitted))).toEqual(longSubmitted);
    expect(decodeInbound(overTheWire(encodeInbound(inbound)))).toEqual(inbound);
    for (const value of [encodeJob(job), encodeStatus(status), encodeInbound(inbound)]) expect(wire(value).v).toBe(1);
    const plain = { ...job, im: undefined, content: '🇳🇿'.repeat(500) };
    expect(decodeJob(overTheWire(encodeJob(plain)))).toEqual({ ...job, content: plain.content, im: undefined });
  });

  it('carries the carrier ids of a message to be asked about rather than sent, in a process or across one', () => {
    const query: OutboundJob = { ...job, im: undefined, channel: 'sms', carrierIds: ['smsc:0a1b2c', 'smsc:ā2'] };
    expect(decodeJob(overTheWire(encodeJob(query)))).toEqual(query);
    expect(decodeJob(encodeJob(query))).toEqual(query);
    expect(decodeJob(overTheWire(encodeJob({ ...job, carrierIds: undefined }))).carrierIds).toBeUndefined();
  });

  it('decodes a record that never left this process to what another process reads from its bytes, field for field', () => {
    fc.assert(
      fc.property(jobArb, statusArb, inboundArb, (j, u, m) => {
        const extra = { ...j, dataCoding: 8 } as OutboundJob;
        for (const [here, there] of [
          [decodeJob(encodeJob(extra)), decodeJob(overTheWire(encodeJob(extra)))],
          [decodeStatus(encodeStatus(u)), decodeStatus(overTheWire(encodeStatus(u)))],
          [decodeInbound(encodeInbound(m)), decodeInbound(overTheWire(encodeInbound(m)))],
        ] as const) {
          // Absent and undefined alike, as a reader of either sees them; and each decode is a copy of its own.
          expect(JSON.parse(JSON.stringify(here))).toStrictEqual(there);
          expect(here).not.toBe(there);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('writes no JSON for a status or job that travels the bus inside one process, and the same JSON as before once a bus asks for bytes', async () => {
    const bus = createMemoryBus();
    const read: StatusUpdate[] = [];
    await bus.subscribe('hermod.status.v1', async (records) => void read.push(...records.map((r) => decodeStatus(r.value))), { group: 'core' });
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      await bus.publish('hermod.status.v1', [{ key: status.id, value: encodeStatus(status) }], { untilDurable: true });
      await bus.publish('hermod.sms.v1', [{ key: job.id, value: encodeJob({ ...job, im: undefined }) }]);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
      await bus.close();
    }
    expect(read).toEqual([status]);
    const value = encodeStatus(status);
    expect(valueBytes(value)).toBe(valueBytes(value));
    expect(valueBytes(value).toString('utf8')).toBe(JSON.stringify({ v: 1, ...status }));
    expect(value.toString()).toBe(JSON.stringify({ v: 1, ...status }));
  });

  it("hands each reader of the same record a copy, so one changing its payload does not change another reader's", () => {
    const value = encodeStatus(status);
    const first = decodeStatus(value);
    first.detail = 'changed by one reader';
    expect(decodeStatus(value).detail).toBe(status.detail);
  });

  it('gives a reader in the same process its own copy of an IM job’s details, and refuses there what it refuses from bytes', () => {
    const withDetails: OutboundJob = {
      ...job,
      im: { type: 'template', template: { id: 't-1', name: 'pānui', language: 'mi', parameters: [{ name: 'greeting', text: 'Kia ora 👋🏽' }] } },
    };
    const value = encodeJob(withDetails);
    const read = decodeJob(value);
    expect(read.im).toEqual(withDetails.im);
    expect(read.im).not.toBe(withDetails.im);
    expect(read.im!.template).not.toBe(withDetails.im!.template);
    // NaN goes over the wire as null, which a reader in another process refuses.
    const noTime = { ...status, at: Number.NaN };
    expect(() => decodeStatus(overTheWire(encodeStatus(noTime)))).toThrow(HermodError);
    expect(() => decodeStatus(encodeStatus(noTime))).toThrow(HermodError);
  });

  it('puts only the named fields on the bus, whatever else the object carries', () => {
    const fromCarrier = { ...inbound, dataCoding: 8, parts: 2 } as InboundPayload;
    expect(Object.keys(wire(encodeInbound(fromCarrier))).sort()).toEqual(['at', 'carrierRef', 'channel', 'destination', 'source', 'text', 'v']);
  });

  it('reads records an older build wrote without a version as version 1, dropping the fields it named then and not now', () => {
    // The bytes the build before versions put on Redis streams and Kafka topics: JSON.stringify of the payload.
    const oldJob = Buffer.from(JSON.stringify({ ...job, im: undefined }));
    const oldStatus = Buffer.from('{"id":"","status":"received","at":1700000003000,"carrierId":"wamid.2","errorCode":"","channel":"wab"}');
    const oldInbound = Buffer.from(
      JSON.stringify({ source: '+64211234561', destination: '4321', text: '你好 ā', at: 1, dataCoding: 8, parts: 1, carrierRef: '', channel: 'sms' }),
    );
    expect(decodeJob(oldJob)).toEqual({ ...job, im: undefined });
    expect(decodeStatus(oldStatus)).toEqual({ id: '', status: 'received', at: 1_700_000_003_000, carrierId: 'wamid.2', errorCode: '', channel: 'wab' });
    expect(decodeInbound(oldInbound)).toEqual({ source: '+64211234561', destination: '4321', text: '你好 ā', at: 1, carrierRef: '', channel: 'sms' });
  });

  it('refuses what is not JSON, not an object, lacks a field or has one of the wrong type, for good', () => {
    const cases: [Buffer, string][] = [
      [Buffer.from('{"id": "1", '), 'invalid_json'],
      [Buffer.from([0xff, 0xfe, 0x00]), 'invalid_json'],
      [Buffer.from('["id"]'), 'invalid_attrib'],
      [Buffer.from('null'), 'invalid_attrib'],
      [Buffer.from(JSON.stringify({ ...job, content: undefined })), 'missing_attrib'],
      [Buffer.from(JSON.stringify({ ...job, id: '' })), 'invalid_attrib'],
      [Buffer.from(JSON.stringify({ ...job, acceptedAt: '2025-01-01' })), 'invalid_attrib'],
      [Buffer.from(JSON.stringify({ ...job, im: { type: 'carrier-pigeon' } })), 'invalid_attrib'],
      [Buffer.from(JSON.stringify({ ...job, v: 0 })), 'invalid_attrib'],
      [Buffer.from(JSON.stringify({ ...job, v: '1' })), 'invalid_attrib'],
      [Buffer.from(JSON.stringify({ ...job, v: 1.5 })), 'invalid_attrib'],
    ];
    for (const [value, code] of cases) expect(refusal(() => decodeJob(value))).toMatchObject({ code, retryable: false });
    expect(refusal(() => decodeStatus(Buffer.from(JSON.stringify({ ...status, status: 'delivered-ish' }))))).toMatchObject({ code: 'invalid_attrib' });
    expect(refusal(() => decodeStatus(Buffer.from(JSON.stringify({ ...status, channel: undefined }))))).toMatchObject({
      code: 'missing_attrib',
      fields: [{ field: 'channel', description: 'is required' }],
    });
    expect(refusal(() => decodeInbound(Buffer.from(JSON.stringify({ ...inbound, text: 42 }))))).toMatchObject({ code: 'invalid_attrib' });
  });

  it('refuses a later version than it reads as retryable, for a member that reads it', () => {
    const err = refusal(() => decodeStatus(Buffer.from(JSON.stringify({ ...status, v: 2 }))));
    expect(err).toMatchObject({ code: 'unprocessable', retryable: true });
    expect(err.message).toMatch(/version 2.*version 1/);
  });
});

describe('decoding a batch from the bus', () => {
  const record = (value: BusValue, offset: string): DeliveredRecord => ({ topic: 'hermod.wab.v1', partition: 3, offset, key: 'k', value, redeliveries: 0 });
  const logged: { message: string; fields: unknown }[] = [];
  const log = { error: (message: string, fields: unknown) => logged.push({ message, fields }) } as unknown as Logger;

  it('sets a malformed record aside, logged with its place on the bus, and keeps the others beside their records', () => {
    const records = [record(encodeJob(job), '1-0'), record(Buffer.from('not json'), '2-0'), record(encodeJob({ ...job, id: 'second' }), '3-0')];
    const decoded = decodeRecords(records, decodeJob, log);
    expect(decoded.map((d) => [d.record.offset, d.payload.id])).toEqual([
      ['1-0', job.id],
      ['3-0', 'second'],
    ]);
    expect(logged).toEqual([
      {
        message: 'refused a record on the bus',
        fields: expect.objectContaining({ topic: 'hermod.wab.v1', partition: 3, offset: '2-0', code: 'invalid_json' }),
      },
    ]);
  });

  it('fails the whole batch on a record of a later version, so that it is handed out again', () => {
    const records = [record(encodeJob(job), '1-0'), record(Buffer.from(JSON.stringify({ ...job, v: 2 })), '2-0')];
    expect(() => decodeRecords(records, decodeJob, log)).toThrow(expect.objectContaining({ code: 'unprocessable', retryable: true }));
  });
});
