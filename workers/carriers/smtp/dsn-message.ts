import { DeliveryStatusError, parseDeliveryStatus, type DeliveryStatus } from './delivery-status';
import { type ContentType, parseContentType } from './content-type';

/** A bounce as hermod reads it: the delivery status, and the returned message's headers when the report carries them. */
export interface DsnMessage {
  status: DeliveryStatus;
  /** Headers of the returned message (message/rfc822 or text/rfc822-headers part), names in lower case; {} when absent. */
  returnedHeaders: Record<string, string>;
}

const DELIVERY_STATUS_TYPES = new Set(['message/delivery-status', 'message/global-delivery-status']);
const RETURNED_TYPES = new Set(['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers']);

/**
 * Reads an RFC 3464 delivery status notification: a `multipart/report;
 * report-type=delivery-status` message (RFC 6522) whose second part is the
 * machine-readable status. Reports nested one level inside another multipart
 * (some gateways wrap them) are found too. Throws DeliveryStatusError for
 * anything else: an autoresponder, a plain-text bounce, a broken report.
 */
export function readDsnMessage(raw: Buffer | string): DsnMessage {
  const top = splitEntity(typeof raw === 'string' ? raw : raw.toString('utf8'));
  const report = findReport(top, 0);
  if (!report) throw new DeliveryStatusError('not a delivery status notification (no multipart/report with a message/delivery-status part)');
  let status: DeliveryStatus | undefined;
  let returnedHeaders: Record<string, string> = {};
  for (const part of parts(report)) {
    const type = contentType(part.headers).value;
    if (!status && DELIVERY_STATUS_TYPES.has(type)) status = parseDeliveryStatus(decodeTransfer(part));
    else if (RETURNED_TYPES.has(type)) returnedHeaders = splitEntity(decodeTransfer(part)).headers;
  }
  if (!status) throw new DeliveryStatusError('the report has no message/delivery-status part');
  return { status, returnedHeaders };
}

interface Entity {
  headers: Record<string, string>;
  body: string;
}

function findReport(entity: Entity, depth: number): Entity | undefined {
  const type = contentType(entity.headers);
  if (type.value === 'multipart/report' && (type.params['report-type'] ?? '').toLowerCase() === 'delivery-status') return entity;
  if (depth > 2 || !type.value.startsWith('multipart/')) return undefined;
  for (const part of parts(entity)) {
    const found = findReport(part, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function splitEntity(raw: string): Entity {
  const match = /\r?\n\r?\n/.exec(raw);
  const end = match ? match.index : raw.length;
  const headers: Record<string, string> = {};
  const unfolded = raw.slice(0, end).replace(/\r?\n(?=[ \t])/g, '');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!(name in headers)) headers[name] = line.slice(colon + 1).trim();
  }
  return { headers, body: match ? raw.slice(end + match[0].length) : '' };
}

function parts(entity: Entity): Entity[] {
  const boundary = contentType(entity.headers).params.boundary;
  if (!boundary) return [];
  const found: string[][] = [];
  let current: string[] | undefined;
  for (const line of entity.body.split(/\r?\n/)) {
    const trimmed = line.trimEnd();
    if (trimmed === `--${boundary}--`) break;
    if (trimmed === `--${boundary}`) found.push((current = []));
    else current?.push(line);
  }
  return found.map((lines) => splitEntity(lines.join('\r\n')));
}

function decodeTransfer(entity: Entity): string {
  const encoding = (entity.headers['content-transfer-encoding'] ?? '').trim().toLowerCase();
  if (encoding === 'base64') return Buffer.from(entity.body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const soft = entity.body.replace(/=\r?\n/g, '');
    return Buffer.from(
      soft.replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    ).toString('utf8');
  }
  return entity.body;
}

function contentType(headers: Record<string, string>): ContentType {
  return parseContentType(headers['content-type'] ?? 'text/plain');
}
