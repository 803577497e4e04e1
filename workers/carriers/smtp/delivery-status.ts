/**
 * The fields of a `message/delivery-status` body (RFC 3464 §2): one group of
 * per-message fields, then one group per recipient, groups separated by a
 * blank line, each field a header-style `Name: value` that may be folded.
 * Only what hermod acts on is kept; unknown and extension fields are skipped.
 */
export interface DeliveryStatus {
  /** `Reporting-MTA`, without its type (`dns; mx.example.net` → `mx.example.net`); '' when absent. */
  reportingMta: string;
  /** `Original-Envelope-Id` (the ENVID the sender gave); '' when absent. */
  originalEnvelopeId: string;
  recipients: RecipientStatus[];
}

export const DSN_ACTIONS = ['failed', 'delayed', 'delivered', 'relayed', 'expanded'] as const;
export type DsnAction = (typeof DSN_ACTIONS)[number];

export interface RecipientStatus {
  /** `Final-Recipient` without its address type (`rfc822;ana@example.com` → `ana@example.com`). */
  finalRecipient: string;
  /** `Original-Recipient` likewise; '' when absent. */
  originalRecipient: string;
  action: DsnAction;
  /** The RFC 3463 code, `class.subject.detail` (e.g. `5.1.1`), without the comment some MTAs put after it. */
  status: string;
  /** `Diagnostic-Code` as the remote MTA gave it, type kept (`smtp; 550 5.1.1 user unknown`); '' when absent. */
  diagnosticCode: string;
  /** `Remote-MTA` without its type; '' when absent. */
  remoteMta: string;
}

/** A body that is not a delivery status report hermod can act on; the message says what is wrong. */
export class DeliveryStatusError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryStatusError';
  }
}

const STATUS_CODE = /^([245])\.(\d{1,3})\.(\d{1,3})(?![\d.])/;

/** Reads a message/delivery-status body; throws DeliveryStatusError when a required field is missing or malformed. */
export function parseDeliveryStatus(body: string): DeliveryStatus {
  const groups = fieldGroups(body);
  if (groups.length === 0) throw new DeliveryStatusError('the delivery status has no fields');
  // The per-message group is required by RFC 3464, but some gateways omit it: a first group naming a recipient is one.
  const perMessage = groups[0]!.has('final-recipient') ? new Map<string, string>() : groups.shift()!;
  if (groups.length === 0) throw new DeliveryStatusError('the delivery status names no recipient');
  return {
    reportingMta: withoutType(perMessage.get('reporting-mta') ?? ''),
    originalEnvelopeId: perMessage.get('original-envelope-id') ?? '',
    recipients: groups.map(recipientOf),
  };
}

function recipientOf(fields: Map<string, string>, index: number): RecipientStatus {
  const which = `recipient ${index + 1}`;
  const finalRecipient = withoutType(fields.get('final-recipient') ?? '');
  if (!finalRecipient) throw new DeliveryStatusError(`${which} has no Final-Recipient`);
  const action = (fields.get('action') ?? '').toLowerCase();
  if (!(DSN_ACTIONS as readonly string[]).includes(action)) {
    throw new DeliveryStatusError(`${which} has Action ${JSON.stringify(fields.get('action') ?? '')}, not one of ${DSN_ACTIONS.join(', ')}`);
  }
  const status = STATUS_CODE.exec(fields.get('status') ?? '');
  if (!status) throw new DeliveryStatusError(`${which} has Status ${JSON.stringify(fields.get('status') ?? '')}, not an RFC 3463 code like 5.1.1`);
  return {
    finalRecipient,
    originalRecipient: withoutType(fields.get('original-recipient') ?? ''),
    action: action as DsnAction,
    status: `${status[1]}.${Number(status[2])}.${Number(status[3])}`,
    diagnosticCode: fields.get('diagnostic-code') ?? '',
    remoteMta: withoutType(fields.get('remote-mta') ?? ''),
  };
}

/** Groups of unfolded fields, names in lower case; a repeated field keeps its first value. */
function fieldGroups(body: string): Map<string, string>[] {
  const groups: Map<string, string>[] = [];
  let current: Map<string, string> | undefined;
  let last: string | undefined;
  for (const line of body.split(/\r?\n/)) {
    if (line.trim() === '') {
      current = undefined;
      last = undefined;
      continue;
    }
    if (/^[ \t]/.test(line)) {
      // A continuation: folded whitespace becomes one space (RFC 5322 §2.2.3).
      if (current && last !== undefined && current.get(last) !== undefined) current.set(last, `${current.get(last)} ${line.trim()}`.trim());
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!current) groups.push((current = new Map()));
    if (current.has(name)) {
      last = undefined;
      continue;
    }
    current.set(name, line.slice(colon + 1).trim());
    last = name;
  }
  return groups;
}

/** `rfc822; ana@example.com` → `ana@example.com`; a value without a type is kept whole. */
function withoutType(value: string): string {
  const semi = value.indexOf(';');
  return (semi >= 0 ? value.slice(semi + 1) : value).trim();
}
