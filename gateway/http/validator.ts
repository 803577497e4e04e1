import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { HermodError, type FieldProblem } from '../../lib/errors';

// ajv-formats is CommonJS; under ESM its function sits on `default`.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

/**
 * Compiles the schemas of one interface's OpenAPI document. A failed check
 * becomes a HermodError listing every offending field, so each interface
 * renders the same problems in its own shape.
 */
export function createValidator(components: Record<string, unknown>) {
  // verbose: a failed check carries its schema, so a schema's own `x-problem` can say what is wrong.
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: false, verbose: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ $id: 'components', $defs: components });
  const cache = new Map<string, ValidateFunction>();

  return function validate<T>(schemaName: string, value: unknown): T {
    let fn = cache.get(schemaName);
    if (!fn) {
      fn = ajv.compile({ $ref: `components#/$defs/${schemaName}` });
      cache.set(schemaName, fn);
    }
    if (fn(value)) return value as T;
    const fields = (fn.errors ?? []).map(describe);
    const missing = (fn.errors ?? []).some((e) => e.keyword === 'required');
    throw new HermodError(missing ? 'missing_attrib' : 'invalid_attrib', fields.map((f) => `${f.field}: ${f.description}`).join('; '), { fields });
  };
}

function describe(e: ErrorObject): FieldProblem {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') {
    const prop = (e.params as { missingProperty: string }).missingProperty;
    return { field: path ? `${path}.${prop}` : prop, description: 'is required' };
  }
  if (e.keyword === 'additionalProperties') {
    const prop = (e.params as { additionalProperty: string }).additionalProperty;
    return { field: path ? `${path}.${prop}` : prop, description: 'is not a known field' };
  }
  const problem = e.keyword === 'pattern' ? (e.parentSchema as { 'x-problem'?: string } | undefined)?.['x-problem'] : undefined;
  return { field: path || '(body)', description: problem ?? e.message ?? 'is invalid' };
}
