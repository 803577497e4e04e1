import type Router from '@koa/router';
import { dereference, validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { GatewayDeps } from './app';
import { gatewayTestDeps, startTestGateway } from './gateway-test-kit';
import { smsV2Router } from './sms-v2/routes';
import { SMS_V2_SCHEMAS } from './sms-v2/schemas';
import { gatewayV1Router } from './gateway-v1/routes';
import { GATEWAY_V1_SCHEMAS } from './gateway-v1/schemas';
import { campaignManagerRouter } from './campaign-manager/routes';
import { CAMPAIGN_MANAGER_SCHEMAS } from './campaign-manager/schemas';
import { intelligentMessagingRouter } from './intelligent-messaging/routes';
import { IM_SCHEMAS } from './intelligent-messaging/schemas';
import { createSharedRateLimiter } from './intelligent-messaging/shared-rate-limiter';
import { METHOD_NOT_ALLOWED } from './http/method-not-allowed';

type Json = Record<string, any>;

const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Each interface: where it is mounted, the router it mounts, and the schemas its requests are validated against. */
const INTERFACES: { name: string; prefix: string; router: (deps: GatewayDeps) => Router; schemas: Record<string, unknown> }[] = [
  { name: 'SMS Gateway v2', prefix: '/rest/sms/v2', router: smsV2Router, schemas: SMS_V2_SCHEMAS },
  { name: 'Gateway v1', prefix: '/rest/gateway', router: gatewayV1Router, schemas: GATEWAY_V1_SCHEMAS },
  { name: 'Campaign Manager', prefix: '/rest/campaign_manager/v1', router: campaignManagerRouter, schemas: CAMPAIGN_MANAGER_SCHEMAS },
  {
    name: 'Intelligent Messaging',
    prefix: '/rest/im/v1',
    router: (deps) =>
      intelligentMessagingRouter({
        im: deps.im,
        idempotency: deps.core,
        auth: deps.auth,
        log: deps.log,
        maxBodyBytes: deps.maxBodyBytes,
        rateLimiter: createSharedRateLimiter(() => Promise.reject(new Error('no core'))),
      }),
    schemas: IM_SCHEMAS,
  },
];

/** `METHOD /path` for every operation of a document, paths relative to its server. */
function documentedOperations(doc: Json): string[] {
  return Object.entries(doc.paths as Json)
    .flatMap(([path, item]) =>
      Object.keys(item as Json)
        .filter((m) => METHODS.includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    )
    .sort();
}

/** `METHOD /path` for every route a router serves (HEAD comes with GET), in OpenAPI's path template form. */
function servedRoutes(router: Router, prefix: string): string[] {
  return router.stack
    .filter((layer) => layer.name !== METHOD_NOT_ALLOWED)
    .flatMap((layer) => {
      const path = String(layer.path)
        .slice(prefix.length)
        .replace(/:(\w+)/g, '{$1}');
      return layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${path}`);
    })
    .sort();
}

/** A URL of the operation with its path parameters filled in (application names are anyone's words). */
function exampleUrl(base: string, prefix: string, path: string): string {
  return base + prefix + path.replace('{application_name}', encodeURIComponent('Tēnā-koe-👋🏽-你好')).replace(/\{\w+\}/g, '374256129327104');
}

function schemaChecker() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: Number.isInteger });
  return (schema: Json, value: unknown): string[] => {
    const check = ajv.compile(schema);
    return check(value) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  };
}

describe('OpenAPI documents', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  const fetched = new Map<string, Promise<{ status: number; type: string; text: string }>>();
  const fetchDocument = (prefix: string) => {
    if (!fetched.has(prefix)) {
      fetched.set(
        prefix,
        fetch(`${gateway.url}${prefix}/openapi.yaml`).then(async (r) => ({
          status: r.status,
          type: r.headers.get('content-type') ?? '',
          text: await r.text(),
        })),
      );
    }
    return fetched.get(prefix)!;
  };
  const documentOf = async (prefix: string): Promise<Json> => YAML.parse((await fetchDocument(prefix)).text);

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  describe.each(INTERFACES)('$name', ({ prefix, router, schemas }) => {
    it('serves its document at its prefix without credentials, and the OpenAPI validator finds it valid', async () => {
      const r = await fetchDocument(prefix);
      expect(r.status).toBe(200);
      expect(r.type).toMatch(/^application\/yaml/);
      const doc = await documentOf(prefix);
      expect(doc.openapi).toBe('3.1.0');
      expect(doc.servers).toEqual([{ url: prefix }]);
      const result = await validate(structuredClone(doc) as never);
      expect(result.valid ? [] : result.errors.map((e) => e.message)).toEqual([]);
      expect(result.warnings.map((w) => w.message)).toEqual([]);
    });

    it('documents every route its router serves, and nothing it does not serve', async () => {
      const doc = await documentOf(prefix);
      expect(documentedOperations(doc)).toEqual(servedRoutes(router(gatewayTestDeps()), prefix));
    });

    it('publishes the very schemas its requests are validated against', async () => {
      const published = (await documentOf(prefix)).components.schemas as Json;
      const asPublished = JSON.parse(JSON.stringify(schemas).replaceAll('"#/$defs/', '"#/components/schemas/'));
      for (const name of Object.keys(schemas)) expect(published[name], name).toEqual(asPublished[name]);
    });

    it('answers each operation without credentials with a 401 its document describes', async () => {
      const doc = await documentOf(prefix);
      const resolved = (await dereference(structuredClone(doc) as never)) as Json;
      const check = schemaChecker();
      const secured = documentedOperations(doc).filter((op) => {
        const [method, path] = op.split(' ') as [string, string];
        return (resolved.paths[path][method.toLowerCase()].security ?? resolved.security).length > 0;
      });
      expect(secured.length).toBeGreaterThan(0);
      for (const op of secured) {
        const [method, path] = op.split(' ') as [string, string];
        const r = await fetch(exampleUrl(gateway.url, prefix, path), {
          method,
          ...(method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{"content":"Kia ora, e hoa mā — tēnā koe"}' } : {}),
        });
        expect(r.status, op).toBe(401);
        const responses = resolved.paths[path][method.toLowerCase()].responses;
        const documented = responses['401'] ?? responses.default;
        const type = (r.headers.get('content-type') ?? '').split(';')[0]!;
        expect(Object.keys(documented.content), op).toContain(type);
        const text = await r.text();
        const body = type === 'application/json' ? JSON.parse(text) : text;
        expect(check(documented.content[type].schema, body), `${op}: ${text}`).toEqual([]);
        if (documented.headers?.['WWW-Authenticate']) expect(r.headers.get('www-authenticate'), op).toBeTruthy();
      }
    });
  });
});
