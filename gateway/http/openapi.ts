import type Router from '@koa/router';
import { MAX_IDEMPOTENCY_KEY } from './idempotency';

/**
 * What every interface's OpenAPI document is made of. Each interface hands
 * over the very schemas its validator compiles (they refer to each other as
 * `#/$defs/Name`, as createValidator expects), the schemas of its answers and
 * of its error body, and its operations; the document rewrites the references
 * to `#/components/schemas/Name`, so what is published is what is enforced.
 */
type Json = Record<string, unknown>;

export interface OpenApiParts {
  title: string;
  /** The interface's stated version (SPEC.md §9). */
  version: string;
  /** The interface's prefix, e.g. `/rest/sms/v2`. */
  server: string;
  securitySchemes: Record<string, Json>;
  /** Security of every operation that does not state its own. */
  security: Record<string, string[]>[];
  /** Schemas by name, from several sources; a name given twice is a mistake. */
  schemas: Record<string, unknown>[];
  /** Operations by path (relative to `server`) and lower-case method. */
  paths: Record<string, Record<string, Json>>;
}

export function openApiDocument(parts: OpenApiParts): Json {
  const schemas: Record<string, unknown> = {};
  for (const source of parts.schemas) {
    for (const [name, schema] of Object.entries(source)) {
      if (Object.hasOwn(schemas, name)) throw new Error(`${parts.title}: schema ${name} is defined twice`);
      schemas[name] = schema;
    }
  }
  const paths = { ...parts.paths, '/openapi.yaml': { get: OPENAPI_OPERATION } };
  return asComponents({
    openapi: '3.1.0',
    info: { title: parts.title, version: parts.version },
    servers: [{ url: parts.server }],
    security: parts.security,
    paths,
    components: { securitySchemes: parts.securitySchemes, schemas },
  }) as Json;
}

/** GET /openapi.yaml on the interface's router: the document, without credentials. */
export function serveOpenApi(router: Router, document: Json): void {
  // Written at the first request for it, not at every gateway's start (four documents, some 80 ms); yaml is
  // loaded then too (its 70 modules, some 35 ms of every start).
  let text: string | undefined;
  router.get('/openapi.yaml', async (ctx) => {
    text ??= (await import('yaml')).stringify(document, { aliasDuplicateObjects: false });
    ctx.type = 'application/yaml';
    ctx.body = text;
  });
}

/** A reference to a component schema. */
export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

/** A body of these media types (JSON unless stated). */
export function content(schema: Json, types: readonly string[] = ['application/json']): Json {
  return { content: Object.fromEntries(types.map((type) => [type, { schema }])) };
}

/** A response: its description, body (if any) and headers (if any). */
export function response(description: string, body?: Json, headers?: Record<string, Json>): Json {
  return { description, ...(body ?? {}), ...(headers ? { headers } : {}) };
}

export const textBody = (): Json => content({ type: 'string' }, ['text/plain']);

/** Idempotency-Key on the operations that honour it (gateway/http/idempotency.ts). */
export const IDEMPOTENCY_KEY: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'The same key with the same request within the idempotency window answers the first answer again (with Idempotent-Replayed: true) ' +
    'and sends nothing; with a different request 422; while the first is still running 409.',
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY },
};

export const IDEMPOTENT_REPLAYED: Json = {
  description: 'true when this is the stored answer of an earlier request with the same Idempotency-Key',
  schema: { type: 'string', enum: ['true'] },
};

export const LOCATION: Json = { description: 'URL of the new resource', schema: { type: 'string', format: 'uri' } };

export const WWW_AUTHENTICATE: Json = { description: 'The schemes the interface accepts', schema: { type: 'string' } };

const OPENAPI_OPERATION: Json = {
  summary: 'This OpenAPI document',
  operationId: 'getOpenApiDocument',
  security: [],
  responses: { '200': response('The OpenAPI document of this interface', content({ type: 'string' }, ['application/yaml'])) },
};

/** Validator references (`#/$defs/X`) as OpenAPI references, in a fresh copy of plain data. */
function asComponents(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asComponents);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === '$ref' && typeof v === 'string' ? v.replace(/^#\/\$defs\//, '#/components/schemas/') : asComponents(v),
    ]),
  );
}
