import { HermodError, type ErrorCode, type FieldProblem } from '../../lib/errors';
import type { ImSendRequest } from '../../proto/gen/hermod/v1/im';
import { createValidator } from '../http/validator';
import { checkSmsText } from '../../core/domain/control-characters';
import { destinationProblem } from '../../core/domain/destination-problem';
import { IM_SCHEMAS, MESSAGE_TYPES, type MessagePostRequest } from './schemas';

const validate = createValidator(IM_SCHEMAS);
const ATTEMPT_FIELDS = new Set(['channel', 'event', 'timeout']);
const E164 = new RegExp(IM_SCHEMAS.E164.pattern);
// The validator names a problem with the whole body so; APIError leaves `field` out instead.
const WHOLE_BODY = '(body)';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A parsed JSON body as a valid MessagePostRequest with its delivery attempts
 * unwrapped, or a 400 naming every offending field once by its wire path
 * (`destination.mobile`, `delivery_attempts[1].first.timeout`).
 */
export function parseMessageRequest(raw: unknown): MessagePostRequest {
  const { body, labels } = unwrapLabels(raw);
  const problems: FieldProblem[] = [];
  let code: ErrorCode = 'invalid_attrib';
  try {
    validate<MessagePostRequest>('MessagePostRequest', body);
  } catch (err) {
    if (!(err instanceof HermodError) || err.fields.length === 0) throw err;
    code = err.code;
    problems.push(...err.fields);
  }
  // Control characters a handset cannot show (C0 but line breaks and tabs, DEL, C1), named as v1 and v2 name them;
  // such a problem replaces the validator's for the same field (the text body's pattern).
  const controls = controlProblems(body);
  const named = new Set(controls.map((p) => p.field));
  problems.splice(0, problems.length, ...problems.filter((p) => !named.has(p.field)), ...controls);
  problems.push(...repeatedParameterNames(body), ...mobileProblems(body));
  const missing = missingContent(body);
  if (missing) {
    code = 'missing_attrib';
    problems.push(missing);
  }
  if (problems.length === 0) return body as unknown as MessagePostRequest;
  const fields = problems.map((p) => ({ field: wirePath(p.field, labels), description: p.description }));
  throw new HermodError(code, fields.map((f) => (f.field ? `${f.field}: ${f.description}` : f.description)).join('; '), { fields });
}

/**
 * Core's refusal of a request's content (an attempt waiting for an event its
 * channel never reports) with its fields named as the client wrote them, the
 * attempts' labels in, as parseMessageRequest names the validator's problems.
 */
export function namedAsSent(err: unknown, raw: unknown): unknown {
  if (!(err instanceof HermodError) || err.fields.length === 0) return err;
  const { labels } = unwrapLabels(raw);
  let message = err.message;
  const fields = err.fields.map((f) => {
    const field = wirePath(f.field, labels);
    if (field !== f.field) message = message.split(`${f.field}:`).join(`${field}:`);
    return { ...f, field };
  });
  return new HermodError(err.code, message, { fields, retryable: err.retryable, retryAfterSeconds: err.retryAfterSeconds, cause: err.cause });
}

/** The request for core: only the content the type names, absent optional fields as proto defaults. */
export function toImSendRequest(applicationId: string, body: MessagePostRequest, dedupKey = ''): ImSendRequest {
  const { destination: d, message: m } = body;
  return {
    applicationId,
    destination: { contactId: d.contact_id ?? '', mobile: d.mobile ?? '', email: d.email ?? '' },
    message: {
      type: m.type,
      text: m.type === 'text' ? m.text!.body : '',
      media: m.type === 'media' ? { mimeType: m.media!.type, url: m.media!.url } : undefined,
      template:
        m.type === 'template'
          ? {
              templateId: m.template!.template_id,
              language: m.template!.language ?? '',
              parameters: (m.template!.parameters ?? []).map((p) => ({ name: p.name, text: p.text })),
            }
          : undefined,
    },
    // A missing timeout stays absent: core then waits HERMOD_IM_DEFAULT_TIMEOUT (as for 0).
    attempts: (body.delivery_attempts ?? []).map((a) => ({ channel: a.channel, event: a.event ?? '', timeout: a.timeout })),
    reference: body.reference ?? '',
    schedulerPipe: body.scheduler_pipe ?? '',
    dedupKey,
  };
}

/**
 * Removes the label wrapper of each labelled attempt (an object whose only
 * key is not an attempt field and whose value is an object), keeping order,
 * and remembers the labels so problems can be reported where the client put them.
 */
function unwrapLabels(raw: unknown): { body: unknown; labels: (string | undefined)[] } {
  if (!isObject(raw) || !Array.isArray(raw.delivery_attempts)) return { body: raw, labels: [] };
  const labels = raw.delivery_attempts.map(labelOf);
  const attempts = raw.delivery_attempts.map((item: unknown, i) => (labels[i] === undefined ? item : (item as Json)[labels[i]!]));
  return { body: { ...raw, delivery_attempts: attempts }, labels };
}

function labelOf(item: unknown): string | undefined {
  if (!isObject(item)) return undefined;
  const keys = Object.keys(item);
  if (keys.length !== 1 || ATTEMPT_FIELDS.has(keys[0]!)) return undefined;
  return isObject(item[keys[0]!]) ? keys[0] : undefined;
}

/**
 * The reference's, the text body's and each template parameter's control
 * character, if any: a parameter reaches the handset and the e-mail body as
 * the text does. A
 * parameter is also named by its name, which the client knows it by.
 */
function controlProblems(body: unknown): FieldProblem[] {
  const texts: { field: string; text: unknown; name?: unknown }[] = [];
  // The client's reference comes back in every status callback (as detail): printable, line breaks and tabs aside.
  if (isObject(body)) texts.push({ field: 'reference', text: body.reference });
  const message = isObject(body) ? body.message : undefined;
  if (isObject(message)) {
    if (isObject(message.text)) texts.push({ field: 'message.text.body', text: message.text.body });
    const parameters = isObject(message.template) ? message.template.parameters : undefined;
    if (Array.isArray(parameters))
      parameters.forEach((p: unknown, i) => {
        if (isObject(p)) texts.push({ field: `message.template.parameters[${i}].text`, text: p.text, name: p.name });
      });
  }
  const problems: FieldProblem[] = [];
  for (const { field, text, name } of texts) {
    if (typeof text !== 'string') continue;
    try {
      checkSmsText(text, field);
    } catch (err) {
      if (!(err instanceof HermodError)) throw err;
      // A name is quoted only when it is a valid one (ShortString): an invalid name has its own problem.
      const label = typeof name === 'string' && /^[A-Za-z0-9 _-]{1,256}$/.test(name) ? `parameter "${name}" ` : '';
      problems.push(...err.fields.map((f) => ({ field: f.field, description: label + f.description })));
    }
  }
  return problems;
}

/** A valid E.164 mobile that cannot be sent as written: its country's trunk prefix after the country code (`+640211234567`), a North American area code starting with 0 or 1. */
function mobileProblems(body: unknown): FieldProblem[] {
  const mobile = isObject(body) && isObject(body.destination) ? body.destination.mobile : undefined;
  if (typeof mobile !== 'string' || !E164.test(mobile)) return [];
  const description = destinationProblem(mobile);
  return description === undefined ? [] : [{ field: 'destination.mobile', description }];
}

/**
 * A template parameter name given again: one placeholder takes one value, and
 * which of two the client meant cannot be told (SMS would show one, WhatsApp
 * would be sent both). Names are compared exactly, as placeholders are.
 */
function repeatedParameterNames(body: unknown): FieldProblem[] {
  const message = isObject(body) ? body.message : undefined;
  const parameters = isObject(message) && isObject(message.template) ? message.template.parameters : undefined;
  if (!Array.isArray(parameters)) return [];
  const first = new Map<string, number>();
  const problems: FieldProblem[] = [];
  parameters.forEach((p: unknown, i) => {
    if (!isObject(p) || typeof p.name !== 'string') return;
    const earlier = first.get(p.name);
    if (earlier === undefined) first.set(p.name, i);
    else
      problems.push({
        field: `message.template.parameters[${i}].name`,
        description: `"${p.name}" is given already as parameters[${earlier}]; each parameter name once`,
      });
  });
  return problems;
}

/** Type text needs `text`, media needs `media`, template needs `template`. */
function missingContent(body: unknown): FieldProblem | undefined {
  if (!isObject(body) || !isObject(body.message)) return undefined;
  const type = body.message.type;
  if (typeof type !== 'string' || !(MESSAGE_TYPES as readonly string[]).includes(type)) return undefined;
  if (body.message[type] !== undefined) return undefined;
  return { field: `message.${type}`, description: `is required when type is ${type}` };
}

/** The validator's path (`delivery_attempts[1].timeout`) as the client wrote it: with the label it wrapped the attempt in. */
function wirePath(path: string, labels: (string | undefined)[]): string {
  if (path === WHOLE_BODY) return '';
  const attempt = /^delivery_attempts\[(\d+)\]/.exec(path);
  const label = attempt ? labels[Number(attempt[1])] : undefined;
  return label === undefined ? path : `${attempt![0]}.${label}${path.slice(attempt![0].length)}`;
}
