import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { MESSAGE_STATUSES, type MessageStatus } from '../domain/message-status';
import { type BusValue, type DeliveredRecord, type PendingBytes, valueBytes } from './bus';

/**
 * The contract between core and the channel workers on the bus: jobs on the
 * channel topics (and core's own `im` topic), status updates on `status`,
 * messages from handsets on `inbound`. JSON keeps the payloads readable with
 * any Kafka or Redis tool; they are small, so its cost is minor next to the
 * carrier hop.
 *
 * Every record carries the version of its schema in `v`. A record without
 * one was written before versions existed and reads as version 1, so records
 * left on Redis streams or Kafka topics by an older build are still taken
 * after an upgrade. Decoding checks each record against its schema: what is
 * not JSON, lacks a field or has one of the wrong type is refused with a
 * HermodError rather than half-processed. Fields the schema does not name
 * are dropped (an older build wrote some: a reader tolerates them). A later
 * version than this build reads is refused as retryable: the record waits
 * for a member of the group that reads it (upgrade consumers first).
 */
export const BUS_PAYLOAD_VERSION = 1;

export interface OutboundJob {
  id: string;
  applicationId: string;
  channel: string;
  destination: string;
  source: string;
  content: string;
  acceptedAt: number;
  /** Intelligent Messaging: the kind of message, and its media or template (content holds the text). */
  im?: ImJobDetails;
  /** The W3C traceparent of the span that published it, while tracing is on (see bus-spans.ts). */
  trace?: string;
  /** Handed over again after its carrier refused it for a while (see StatusUpdate.retryAt): since when (ms). */
  deferredSince?: number;
  /** An SMS's message class, 1 to 3 (SMS Gateway v2 and Gateway v1 `sms_class`); absent when none was asked for. */
  smsClass?: number;
  /**
   * Not a send: the message is with the carrier already, under these ids (its parts'), and its receipts may
   * have been lost (a Redis bus back empty took those on its streams): the worker asks the carrier what became
   * of it (SMPP query_sm) and reports what it finds, and never sends it.
   */
  carrierIds?: string[];
}

export interface ImJobDetails {
  type: 'text' | 'media' | 'template';
  media?: { mimeType: string; url: string };
  /** The carrier-side template: name and language as the carrier knows them, named parameters. */
  template?: { id: string; name: string; language: string; parameters: { name: string; text: string }[] };
  /** E-mail subject. */
  subject?: string;
  /** The caller's reference, for carriers that carry one. */
  reference?: string;
}

/** A status change reported by a worker. `id` may be empty when only the carrier id is known. */
export interface StatusUpdate {
  id: string;
  status: MessageStatus;
  at: number;
  carrierId?: string;
  /**
   * A long message's `submitted`: the carrier ids of its parts after the
   * first (`carrierId`). History keeps each, so a receipt for any part still
   * finds its message once hot state is lost (a kill -9 of core on the
   * in-process state, a Redis flushed).
   */
  partCarrierIds?: string[];
  /**
   * A failure with partCarrierIds (a long SMS refused after the carrier took
   * some of its parts): the route those parts went by (`route … → carrier …`,
   * which a `submitted` says in its detail).
   */
  route?: string;
  /**
   * The carrier id as an earlier version kept it (as the carrier wrote it, not
   * as a number in its base), when that differs: a message it submitted is
   * found by this one.
   */
  carrierIdAsWritten?: string;
  errorCode?: string;
  detail?: string;
  channel: string;
  /** The W3C traceparent of the span that reported it, while tracing is on. */
  trace?: string;
  /**
   * Not a status change but a deferral (status `queued`: waiting for carrier
   * capacity): the carrier kept refusing the message for a reason that passes
   * (an e-mail server greylisting, an SMSC throttling), and the worker gives
   * it back to core to be handed over again at this time (ms), rather than
   * holding its batch. `deferredSince`: when its carrier first refused it.
   */
  retryAt?: number;
  deferredSince?: number;
}

/** A message from a handset (MO), as the carrier delivered it. */
export interface InboundPayload {
  source: string;
  destination: string;
  text: string;
  at: number;
  channel: string;
  /** References a carrier repeats when it delivers the same message again; '' or absent when none. */
  carrierRef?: string;
  /** The carrier's own id of the business address written to (WhatsApp: the phone number id), which an application may claim instead of the address; '' or absent when none. */
  businessId?: string;
  /** The carrier's id of the message it replies to (WhatsApp: `context.id`); '' or absent when none. */
  quotedRef?: string;
}

const str = { type: 'string' } as const;
const num = { type: 'number' } as const;
/** Version 1 of each payload; `additionalProperties: false` with removeAdditional drops unnamed fields instead of refusing them. */
const object = (required: string[], properties: Record<string, unknown>) => ({
  type: 'object',
  required,
  additionalProperties: false,
  properties: { v: { const: 1 }, ...properties },
});
const nested = (required: string[], properties: Record<string, unknown>) => ({ type: 'object', required, additionalProperties: false, properties });

/** The JSON Schema of each kind of payload (exported for the test that checks them against JSON Schema 2020-12). */
export const BUS_PAYLOAD_SCHEMAS = {
  job: object(['id', 'applicationId', 'channel', 'destination', 'source', 'content', 'acceptedAt'], {
    id: { type: 'string', minLength: 1 },
    applicationId: str,
    channel: { type: 'string', minLength: 1 },
    destination: str,
    source: str,
    content: str,
    acceptedAt: num,
    im: nested(['type'], {
      type: { enum: ['text', 'media', 'template'] },
      media: nested(['mimeType', 'url'], { mimeType: str, url: str }),
      template: nested(['id', 'name', 'language', 'parameters'], {
        id: str,
        name: str,
        language: str,
        parameters: { type: 'array', items: nested(['name', 'text'], { name: str, text: str }) },
      }),
      subject: str,
      reference: str,
    }),
    trace: str,
    deferredSince: num,
    smsClass: num,
    carrierIds: { type: 'array', items: str, maxItems: 256 },
  }),
  status: object(['id', 'status', 'at', 'channel'], {
    id: str,
    status: { enum: MESSAGE_STATUSES },
    at: num,
    carrierId: str,
    partCarrierIds: { type: 'array', items: str, maxItems: 255 },
    route: str,
    carrierIdAsWritten: str,
    errorCode: str,
    detail: str,
    channel: str,
    trace: str,
    retryAt: num,
    deferredSince: num,
  }),
  inbound: object(['source', 'destination', 'text', 'at', 'channel'], {
    source: str,
    destination: str,
    text: str,
    at: num,
    channel: str,
    carrierRef: str,
    businessId: str,
    quotedRef: str,
  }),
};
type Kind = keyof typeof BUS_PAYLOAD_SCHEMAS;

// Checked against JSON Schema 2020-12 by bus-payloads.test.ts, not again as every process starts (the meta-schema's compile).
const ajv = new Ajv2020({ allErrors: true, removeAdditional: true, validateSchema: false });
const VALIDATORS = Object.fromEntries(Object.entries(BUS_PAYLOAD_SCHEMAS).map(([kind, schema]) => [kind, ajv.compile(schema)])) as Record<
  Kind,
  ValidateFunction
>;

/**
 * A payload on its way through the bus, encoded only if a bus asks for its
 * bytes. The bus inside one process (the embedded default) hands the
 * subscriber this very object, whose decode then copies the fields instead of
 * writing JSON and parsing and validating it again a moment later; Redis,
 * Kafka and the thread bridge ask for the bytes (`valueBytes`), and what
 * comes back from them is parsed and checked as always. Only flat payloads of
 * plain values travel so: a nested object (an IM job's details) would be
 * shared with the publisher, and a number JSON cannot carry (NaN) would read
 * differently; those are encoded at once.
 */
class Payload implements PendingBytes {
  #bytes: Buffer | undefined;
  constructor(
    readonly kind: Kind,
    /** The fields as a reader of the JSON sees them: none is undefined. */
    readonly fields: Record<string, unknown>,
  ) {}

  bytes(): Buffer {
    this.#bytes ??= Buffer.from(JSON.stringify({ v: BUS_PAYLOAD_VERSION, ...this.fields }));
    return this.#bytes;
  }

  toString(encoding: BufferEncoding = 'utf8'): string {
    return this.bytes().toString(encoding);
  }
}

function encode(kind: Kind, payload: Record<string, unknown>): BusValue {
  // As a reader of the JSON sees it: a field that is undefined is absent.
  const fields: Record<string, unknown> = {};
  for (const name in payload) {
    const field = payload[name];
    if (field === undefined) continue;
    if (!(typeof field === 'string' || typeof field === 'boolean' || (typeof field === 'number' && Number.isFinite(field))))
      return new Payload(kind, payload).bytes();
    fields[name] = field;
  }
  return new Payload(kind, fields);
}

function decode<T>(kind: Kind, value: BusValue): T {
  if (value instanceof Payload && value.kind === kind) return { ...value.fields } as T;
  const bytes = valueBytes(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new HermodError('invalid_json', `a ${kind} record on the bus is not JSON`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new HermodError('invalid_attrib', `a ${kind} record on the bus is not an object`);
  const record = parsed as Record<string, unknown>;
  const v = record.v ?? 1;
  if (!Number.isSafeInteger(v) || (v as number) < 1) {
    throw new HermodError('invalid_attrib', `a ${kind} record on the bus has version ${JSON.stringify(v)}`, {
      fields: [{ field: 'v', description: 'is not a version' }],
    });
  }
  if ((v as number) > BUS_PAYLOAD_VERSION) {
    throw new HermodError('unprocessable', `a ${kind} record on the bus has version ${v}; this build reads up to version ${BUS_PAYLOAD_VERSION}`, {
      retryable: true,
    });
  }
  const validate = VALIDATORS[kind];
  if (!validate(record)) {
    const fields = (validate.errors ?? []).map(problem);
    const missing = (validate.errors ?? []).some((e) => e.keyword === 'required');
    throw new HermodError(
      missing ? 'missing_attrib' : 'invalid_attrib',
      `a ${kind} record on the bus: ${fields.map((f) => `${f.field} ${f.description}`).join('; ')}`,
      {
        fields,
      },
    );
  }
  delete record.v;
  return record as T;
}

function problem(e: ErrorObject): { field: string; description: string } {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') {
    const prop = (e.params as { missingProperty: string }).missingProperty;
    return { field: path ? `${path}.${prop}` : prop, description: 'is required' };
  }
  return { field: path || '(record)', description: e.message ?? 'is invalid' };
}

export const encodeJob = (job: OutboundJob): BusValue =>
  encode('job', {
    id: job.id,
    applicationId: job.applicationId,
    channel: job.channel,
    destination: job.destination,
    source: job.source,
    content: job.content,
    acceptedAt: job.acceptedAt,
    im: job.im,
    trace: job.trace,
    deferredSince: job.deferredSince,
    smsClass: job.smsClass,
    carrierIds: job.carrierIds,
  });
export const decodeJob = (value: BusValue): OutboundJob => decode('job', value);

export const encodeStatus = (u: StatusUpdate): BusValue =>
  encode('status', {
    id: u.id,
    status: u.status,
    at: u.at,
    carrierId: u.carrierId,
    partCarrierIds: u.partCarrierIds,
    route: u.route,
    carrierIdAsWritten: u.carrierIdAsWritten,
    errorCode: u.errorCode,
    detail: u.detail,
    channel: u.channel,
    trace: u.trace,
    retryAt: u.retryAt,
    deferredSince: u.deferredSince,
  });
export const decodeStatus = (value: BusValue): StatusUpdate => decode('status', value);

export const encodeInbound = (m: InboundPayload): BusValue =>
  encode('inbound', {
    source: m.source,
    destination: m.destination,
    text: m.text,
    at: m.at,
    channel: m.channel,
    carrierRef: m.carrierRef,
    businessId: m.businessId,
    quotedRef: m.quotedRef,
  });
export const decodeInbound = (value: BusValue): InboundPayload => decode('inbound', value);

/**
 * Decodes a batch, each payload beside its record. A record the contract
 * refuses for good (malformed) is logged and left out: handing it out again
 * would change nothing and hold up the records behind it. A retryable refusal
 * (a later version) fails the whole batch, so it is handed out again, in time
 * to a member that reads it.
 */
export function decodeRecords<T>(
  records: readonly DeliveredRecord[],
  decodePayload: (value: BusValue) => T,
  log: Logger,
): { record: DeliveredRecord; payload: T }[] {
  const decoded: { record: DeliveredRecord; payload: T }[] = [];
  for (const record of records) {
    try {
      decoded.push({ record, payload: decodePayload(record.value) });
    } catch (err) {
      if (!(err instanceof HermodError) || err.retryable) throw err;
      log.error('refused a record on the bus', {
        topic: record.topic,
        partition: record.partition,
        offset: record.offset,
        code: err.code,
        reason: err.message,
      });
    }
  }
  return decoded;
}
