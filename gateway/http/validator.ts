import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { HermodError, type FieldProblem } from '../../lib/errors';
import { MEMBER_DESTINATION_PATTERN } from '../../core/domain/member-destination';
import { isEmailAddress } from './email-address';
import { nearMissFields } from './near-miss-fields';

// ajv-formats is CommonJS; under ESM its function sits on `default`.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

/**
 * Compiles the schemas of one interface's OpenAPI document. A failed check
 * becomes a HermodError listing every offending field, so each interface
 * renders the same problems in its own shape.
 */
export function createValidator(components: Record<string, unknown>) {
  // The schemas are hermod's own, checked against JSON Schema 2020-12 by validator.test.ts: checking them
  // again at every start compiled the meta-schema once per interface, 170 ms of each gateway's start.
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: false, validateSchema: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  // ajv-formats' `email` is ASCII only: addresses at kōrero.nz or 例子.广告 are as real as any.
  ajv.addFormat('email', { type: 'string', validate: isEmailAddress });
  ajv.addSchema({ $id: 'components', $defs: components });
  const cache = new Map<string, ValidateFunction>();

  return function validate<T>(schemaName: string, value: unknown): T {
    let fn = cache.get(schemaName);
    if (!fn) {
      fn = ajv.compile({ $ref: `components#/$defs/${schemaName}` });
      cache.set(schemaName, fn);
    }
    const valid = fn(value);
    const slips = nearMissFields(components, components[schemaName], value, (parts) =>
      fieldPath(parts.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')),
    );
    if (valid && slips.length === 0) return value as T;
    const fields = [...(valid ? [] : withoutImplied((fn.errors ?? []).map(describe))), ...slips];
    const missing = !valid && (fn.errors ?? []).some((e) => e.keyword === 'required');
    throw new HermodError(missing ? 'missing_attrib' : 'invalid_attrib', fields.map((f) => `${f.field}: ${f.description}`).join('; '), { fields });
  };
}

/**
 * A JSON Pointer as a field path, written one way everywhere: fields joined
 * by dots, array positions in brackets (`members[0].param1`, `list_ids[1]`).
 */
export function fieldPath(pointer: string, field?: string): string {
  const segments = pointer === '' ? [] : pointer.slice(1).split('/');
  if (field !== undefined) segments.push(field);
  return segments
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, s) => (/^\d+$/.test(s) ? `${path}[${s}]` : path ? `${path}.${s}` : s), '');
}

const EMPTY = 'must not be empty';

/** An empty text is blank too: one problem said once, not also as the visible-character pattern. */
function withoutImplied(problems: FieldProblem[]): FieldProblem[] {
  const empty = new Set(problems.filter((p) => p.description === EMPTY).map((p) => p.field));
  if (empty.size === 0) return problems;
  const blank = PATTERNS_SAID[VISIBLE_TEXT];
  return problems.filter((p) => !(p.description === blank && empty.has(p.field)));
}

function describe(e: ErrorObject): FieldProblem {
  const path = fieldPath(e.instancePath);
  if (e.keyword === 'required') {
    const prop = (e.params as { missingProperty: string }).missingProperty;
    return { field: fieldPath(e.instancePath, prop), description: 'is required' };
  }
  if (e.keyword === 'additionalProperties') {
    const prop = (e.params as { additionalProperty: string }).additionalProperty;
    return { field: fieldPath(e.instancePath, prop), description: 'is not a known field' };
  }
  if (e.keyword === 'minLength' && (e.params as { limit: number }).limit === 1) return { field: path || '(body)', description: EMPTY };
  if (e.keyword === 'pattern') {
    const said = PATTERNS_SAID[(e.params as { pattern: string }).pattern];
    if (said) return { field: path || '(body)', description: said };
  }
  if (e.keyword === 'format' && (e.params as { format: string }).format === 'uri') return { field: path || '(body)', description: URI_SAID };
  return { field: path || '(body)', description: e.message ?? 'is invalid' };
}

/**
 * A text with at least one visible character: not only white space (spaces, tabs, line breaks, no-break and
 * ideographic spaces), zero-width characters and joiners, direction marks, invisible operators, variation
 * selectors, soft hyphens, byte-order marks, Hangul fillers or the blank braille pattern, which reach a handset
 * or an inbox as a blank message.
 */
export const VISIBLE_TEXT = '[^\\s\\u00ad\\u034f\\u115f\\u1160\\u17b4\\u17b5\\u180e\\u200b-\\u200f\\u2060-\\u2064\\u2800\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0]';

/** A URL refused by `format: uri` (RFC 3986): most often one written with characters a URL must percent-encode. */
const URI_SAID =
  'is not a URL: it must be absolute (https://…), with spaces and characters outside ASCII percent-encoded (e.g. https://cdn.example.com/invoice%20%C5%8Ctautahi.pdf)';

/** What a value failing one of the schemas' patterns is, in words (a client reads these, not regular expressions). */
const PATTERNS_SAID: Record<string, string> = {
  [VISIBLE_TEXT]: 'must not be blank: it holds only spaces, line breaks or invisible characters',
  '^\\+?[1-9][0-9]{6,14}$':
    'is not a mobile number in E.164 form: 7 to 15 digits, the country code first, a + in front or not, no spaces and no leading 00 (e.g. +64211234567)',
  '^\\+[1-9][0-9]{1,14}$': 'is not a number in E.164 form: + and up to 15 digits, the country code first, no spaces (e.g. +64211234567)',
  [MEMBER_DESTINATION_PATTERN]:
    'is not a phone number: + and 3 to 15 digits (the country code first), or 3 to 15 digits without it, with no spaces, dashes, brackets or letters (e.g. +64211234567)',
  '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$': 'is not a UUID in lower-case hex (e.g. 2f1c9a4e-8b3d-4c2a-9e1f-0a6b7c8d9e0f)',
};
