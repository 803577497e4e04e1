import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { Node, YAMLMap } from 'yaml';
import { parseDuration } from './duration';

/**
 * yaml, loaded when a carriers file is first read: most processes read none, and loading its 70 modules
 * cost every role's start about 35 ms of CPU.
 */
let yaml: typeof Yaml | undefined;
function yamlModule(): typeof Yaml {
  yaml ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return yaml;
}

/**
 * The carriers file (HERMOD_CARRIERS_FILE): the SMPP carriers hermod binds to,
 * the ordered routes that pick one per message, and an optional table of
 * ported numbers. Parsed and checked once at start-up into frozen values;
 * every mistake is reported with the file, line and field.
 */
export interface SimulatedCarrierConfig {
  /** Relative weights of what the simulator does with each submit. */
  outcomes: { delivered: number; undeliverable: number; expired: number; rejected: number };
  /** Submits per second it accepts before answering ESME_RTHROTTLED (0: no limit). */
  rate: number;
  receiptDelayMs: number;
}

export type IdBase = 'hex' | 'decimal';

export type BindMode = 'transceiver' | 'transmitter_receiver';

export interface CarrierConfig {
  name: string;
  host: string;
  port: number;
  systemId: string;
  password: string;
  systemType: string;
  /** Binds each SMS worker keeps open: transceivers, or transmitter and receiver pairs (bindMode). */
  binds: number;
  /**
   * `transceiver` (SMPP 3.4's one session both ways, the default), or
   * `transmitter_receiver`: each bind a bind_transmitter for submits beside a
   * bind_receiver for receipts and replies, for SMSCs (SMPP 3.3 ones among
   * them) that take no transceiver.
   */
  bindMode: BindMode;
  /** Most submit_sm awaiting an answer per bind. */
  windowSize: number;
  /** Submits per second across every worker (hot state); 0: no limit. */
  maxSubmitsPerSecond: number;
  /** TON/NPI given to every source address; undefined: derived from the address. */
  sourceTon: number | undefined;
  sourceNpi: number | undefined;
  /**
   * The country calling code of the carrier's own network (`64`), by which a
   * handset it gives in its national format (`0211234567`) is read as its
   * international number (`+64211234567`); undefined: handsets stay as given.
   */
  countryCode: string | undefined;
  enquireLinkMs: number;
  submitTimeoutMs: number;
  /** How long, from its sending, a submit's answer is waited for in all before it is made again (its window slot freed after submitTimeoutMs). */
  answerWaitMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** How the carrier writes message ids in submit_sm_resp and in delivery receipts (some write one in hex, the other in decimal). */
  submitIds: IdBase;
  receiptIds: IdBase;
  /** Throttling or system errors in a row after which messages go to the route's next carrier for a while. */
  errorThreshold: number;
  /** How long a carrier past its error threshold is left out before it is tried again. */
  errorCooldownMs: number;
  /** Run an SMSC simulator for this carrier under `hermod start` (listening on host:port). */
  simulated: SimulatedCarrierConfig | undefined;
  /**
   * Put before the carrier's message ids where hermod keeps them (`spark:1a2b`), so two carriers that
   * count ids the same way never match each other's receipts; '' for the single carrier of HERMOD_SMPP_*.
   */
  idPrefix: string;
}

/** Where a route sends a message: one carrier, carriers in failover order, or a weighted split. */
export type RouteTarget =
  | { kind: 'carrier'; carriers: readonly [string] }
  | { kind: 'failover'; carriers: readonly string[] }
  | { kind: 'split'; carriers: readonly string[]; weights: readonly number[] };

export type SourceKind = 'alphanumeric' | 'number';

export interface RouteRule {
  name: string;
  /** E.164 prefixes (`+` and digits); empty: any destination. */
  prefixes: readonly string[];
  /** Application ids; empty: any application. */
  applications: readonly string[];
  source: SourceKind | undefined;
  /** Channels; empty: any. */
  channels: readonly string[];
  target: RouteTarget;
}

export interface CarriersConfig {
  /** The file it came from; '' when built from the HERMOD_SMPP_* variables. */
  file: string;
  carriers: readonly CarrierConfig[];
  rules: readonly RouteRule[];
  defaultTarget: RouteTarget;
  /** Ported numbers (`+` and digits) → carrier name; read before any prefix. */
  ported: ReadonlyMap<string, string>;
}

export class CarriersFileError extends Error {}

/** A country calling code as written (`64`, `+64`): its digits, or why it is none. */
export function countryCallingCode(written: string): string | { problem: string } {
  const digits = written.trim().replace(/^\+/, '');
  if (/^[1-9][0-9]{0,2}$/.test(digits)) return digits;
  return { problem: `must be a country calling code, 1 to 3 digits with or without + (64 for New Zealand), got ${JSON.stringify(written)}` };
}

const CARRIER_KEYS = [
  'name',
  'host',
  'port',
  'system_id',
  'password',
  'password_env',
  'system_type',
  'binds',
  'bind_mode',
  'window',
  'max_submits_per_second',
  'source_ton',
  'source_npi',
  'country_code',
  'enquire_link',
  'submit_timeout',
  'answer_wait',
  'reconnect_min',
  'reconnect_max',
  'submit_id',
  'receipt_id',
  'error_threshold',
  'error_cooldown',
  'simulated',
] as const;
const ROUTE_KEYS = ['name', 'match', 'carrier', 'failover', 'split'] as const;
const MATCH_KEYS = ['prefix', 'application', 'source', 'channel'] as const;
const SIMULATED_KEYS = ['outcomes', 'rate', 'receipt_delay'] as const;
const OUTCOMES = ['delivered', 'undeliverable', 'expired', 'rejected'] as const;

/** Reads and checks the carriers file; `env` resolves `password_env`. Throws CarriersFileError naming file, line and field. */
export function loadCarriersFile(file: string, env: Record<string, string | undefined>): CarriersConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CarriersFileError(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return parseCarriersFile(text, file, env);
}

export function parseCarriersFile(text: string, file: string, env: Record<string, string | undefined>): CarriersConfig {
  const { isMap, isScalar, isSeq, LineCounter, parseDocument } = yamlModule();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const lineOf = (node: Node | null | undefined): number => (node?.range ? lines.linePos(node.range[0]).line : 1);
  const fail = (node: Node | null | undefined, field: string, why: string): never => {
    throw new CarriersFileError(`${file}:${lineOf(node)}: ${field}: ${why}`);
  };
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    throw new CarriersFileError(`${file}:${e.linePos?.[0]?.line ?? 1}: not valid YAML: ${e.message.split('\n')[0]}`);
  }
  const root = doc.contents;
  if (!isMap(root)) return fail(root, 'carriers', 'the file must be a mapping with carriers, routes and default_route');
  checkKeys(root, ['carriers', 'routes', 'default_route', 'ported_numbers'], '', fail);

  const r = reader(fail);
  const carrierList = root.get('carriers', true);
  if (!isSeq(carrierList) || carrierList.items.length === 0) return fail(carrierList ?? root, 'carriers', 'a list of at least one carrier is required');
  const carriers: CarrierConfig[] = [];
  for (const [i, item] of carrierList.items.entries()) {
    const at = `carriers[${i}]`;
    if (!isMap(item)) return fail(item as Node, at, 'must be a mapping');
    const name = r.name(item, 'name', at);
    checkKeys(item, CARRIER_KEYS, `carriers.${name}`, fail);
    const field = (key: string) => `carriers.${name}.${key}`;
    if (carriers.some((c) => c.name === name)) fail(item.get('name', true) as Node, field('name'), 'another carrier has this name');
    const password = item.has('password_env')
      ? (() => {
          const variable = r.string(item, 'password_env', field('password_env'), '');
          const value = env[variable];
          if (value === undefined) fail(item.get('password_env', true) as Node, field('password_env'), `the environment variable ${variable} is not set`);
          return value!;
        })()
      : r.string(item, 'password', field('password'), '');
    if (item.has('password') && item.has('password_env'))
      fail(item.get('password_env', true) as Node, field('password_env'), 'give password or password_env, not both');
    const systemId = r.string(item, 'system_id', field('system_id'), 'hermod');
    if (systemId.length > 15) fail(item.get('system_id', true) as Node, field('system_id'), 'SMPP 3.4 allows at most 15 characters');
    if (password.length > 8)
      fail(item.get(item.has('password') ? 'password' : 'password_env', true) as Node, field('password'), 'SMPP 3.4 allows at most 8 characters');
    const systemType = r.string(item, 'system_type', field('system_type'), '');
    if (systemType.length > 12) fail(item.get('system_type', true) as Node, field('system_type'), 'SMPP 3.4 allows at most 12 characters');
    const reconnectMinMs = r.duration(item, 'reconnect_min', field('reconnect_min'), '250ms');
    const reconnectMaxMs = r.duration(item, 'reconnect_max', field('reconnect_max'), '30s');
    if (reconnectMaxMs < reconnectMinMs) fail(item.get('reconnect_max', true) as Node, field('reconnect_max'), 'must be at least reconnect_min');
    const simulatedNode = item.get('simulated', true);
    carriers.push({
      name,
      host: r.string(item, 'host', field('host'), undefined),
      port: r.int(item, 'port', field('port'), undefined, 1, 65535),
      systemId,
      password,
      systemType,
      binds: r.int(item, 'binds', field('binds'), 1, 1, 64),
      bindMode: r.oneOf(item, 'bind_mode', field('bind_mode'), ['transceiver', 'transmitter_receiver'], 'transceiver'),
      windowSize: r.int(item, 'window', field('window'), 64, 1, 10_000),
      maxSubmitsPerSecond: r.int(item, 'max_submits_per_second', field('max_submits_per_second'), 0, 0, 1_000_000),
      sourceTon: item.has('source_ton') ? r.int(item, 'source_ton', field('source_ton'), 0, 0, 6) : undefined,
      sourceNpi: item.has('source_npi') ? r.int(item, 'source_npi', field('source_npi'), 0, 0, 18) : undefined,
      countryCode: item.has('country_code')
        ? (() => {
            const node = item.get('country_code', true) as Node;
            const code = countryCallingCode(r.scalarString(node, field('country_code')));
            return typeof code === 'string' ? code : fail(node, field('country_code'), code.problem);
          })()
        : undefined,
      enquireLinkMs: r.duration(item, 'enquire_link', field('enquire_link'), '30s'),
      submitTimeoutMs: r.duration(item, 'submit_timeout', field('submit_timeout'), '10s'),
      answerWaitMs: r.duration(item, 'answer_wait', field('answer_wait'), '2m'),
      reconnectMinMs,
      reconnectMaxMs,
      submitIds: r.oneOf(item, 'submit_id', field('submit_id'), ['hex', 'decimal'], 'hex'),
      receiptIds: r.oneOf(item, 'receipt_id', field('receipt_id'), ['hex', 'decimal'], 'hex'),
      errorThreshold: r.int(item, 'error_threshold', field('error_threshold'), 20, 1, 1_000_000),
      errorCooldownMs: r.duration(item, 'error_cooldown', field('error_cooldown'), '10s'),
      simulated: simulatedNode === undefined ? undefined : simulatedOf(simulatedNode as Node, field('simulated'), r, fail),
      idPrefix: `${name}:`,
    });
  }
  const names = new Set(carriers.map((c) => c.name));

  const targetOf = (m: YAMLMap, at: string): RouteTarget => {
    const given = (['carrier', 'failover', 'split'] as const).filter((k) => m.has(k));
    if (given.length !== 1) return fail(m, at, 'give exactly one of carrier, failover or split');
    const known = (node: Node, field: string, carrier: string): string => {
      if (!names.has(carrier)) fail(node, field, `no carrier is named ${JSON.stringify(carrier)} (carriers: ${[...names].join(', ')})`);
      return carrier;
    };
    const kind = given[0]!;
    if (kind === 'carrier') {
      const carrier = r.string(m, 'carrier', `${at}.carrier`, undefined);
      return { kind, carriers: [known(m.get('carrier', true) as Node, `${at}.carrier`, carrier)] };
    }
    if (kind === 'failover') {
      const list = m.get('failover', true);
      if (!isSeq(list) || list.items.length === 0) return fail((list as Node) ?? m, `${at}.failover`, 'a list of carrier names in the order they are tried');
      const carriers = list.items.map((n, i) => known(n as Node, `${at}.failover[${i}]`, r.scalarString(n as Node, `${at}.failover[${i}]`)));
      if (new Set(carriers).size !== carriers.length) fail(list, `${at}.failover`, 'a carrier appears twice');
      return { kind, carriers };
    }
    const split = m.get('split', true);
    if (!isMap(split) || split.items.length === 0)
      return fail((split as Node) ?? m, `${at}.split`, 'a mapping of carrier name to weight, e.g. {spark: 70, one: 30}');
    const carriers: string[] = [];
    const weights: number[] = [];
    for (const pair of split.items) {
      const carrier = r.scalarString(pair.key as Node, `${at}.split`);
      known(pair.key as Node, `${at}.split.${carrier}`, carrier);
      const w = isScalar(pair.value) ? Number(pair.value.value) : Number.NaN;
      if (!Number.isInteger(w) || w < 0) fail(pair.value as Node, `${at}.split.${carrier}`, 'the weight must be a whole number of 0 or more');
      carriers.push(carrier);
      weights.push(w);
    }
    if (weights.every((w) => w === 0)) fail(split, `${at}.split`, 'at least one weight must be above 0');
    return { kind, carriers, weights };
  };

  const rules: RouteRule[] = [];
  const routeList = root.get('routes', true);
  if (routeList !== undefined && routeList !== null && !(isScalar(routeList) && routeList.value === null)) {
    if (!isSeq(routeList)) return fail(routeList as Node, 'routes', 'must be a list of rules, tried in order');
    routeList.items.forEach((item, i) => {
      const at = `routes[${i}]`;
      if (!isMap(item)) {
        fail(item as Node, at, 'must be a mapping');
        return;
      }
      const name = item.has('name') ? r.name(item, 'name', at) : `route-${i + 1}`;
      const ruleAt = `routes.${name}`;
      checkKeys(item, ROUTE_KEYS, ruleAt, fail);
      if (rules.some((x) => x.name === name)) fail(item.get('name', true) as Node, `${ruleAt}.name`, 'another route has this name');
      // These name the decisions of the default route and of the ported-numbers table.
      if (name === 'default' || name === 'ported-number') fail(item.get('name', true) as Node, `${ruleAt}.name`, `${name} is reserved`);
      const match = item.get('match', true);
      let prefixes: string[] = [];
      let applications: string[] = [];
      let channels: string[] = [];
      let source: SourceKind | undefined;
      if (match !== undefined) {
        if (!isMap(match)) {
          fail(match as Node, `${ruleAt}.match`, 'must be a mapping of prefix, application, source, channel');
          return;
        }
        checkKeys(match, MATCH_KEYS, `${ruleAt}.match`, fail);
        prefixes = r.list(match, 'prefix', `${ruleAt}.match.prefix`).map(([node, p]) => {
          const normal = p.replace(/[\s-]/g, '');
          if (!/^\+\d{1,15}$/.test(normal)) fail(node, `${ruleAt}.match.prefix`, `${JSON.stringify(p)} is not an E.164 prefix such as +6421`);
          return normal;
        });
        applications = r.list(match, 'application', `${ruleAt}.match.application`).map(([, a]) => a);
        channels = r.list(match, 'channel', `${ruleAt}.match.channel`).map(([, c]) => c);
        source = match.has('source') ? r.oneOf<SourceKind>(match, 'source', `${ruleAt}.match.source`, ['alphanumeric', 'number'], 'number') : undefined;
      }
      rules.push({ name, prefixes, applications, source, channels, target: targetOf(item, ruleAt) });
    });
  }

  const defaultRoute = root.get('default_route', true);
  let defaultTarget: RouteTarget;
  if (defaultRoute === undefined) {
    if (carriers.length > 1) fail(root, 'default_route', 'required when there is more than one carrier (carrier, failover or split)');
    defaultTarget = { kind: 'carrier', carriers: [carriers[0]!.name] };
  } else {
    if (!isMap(defaultRoute)) return fail(defaultRoute as Node, 'default_route', 'must be a mapping with carrier, failover or split');
    checkKeys(defaultRoute, ['carrier', 'failover', 'split'], 'default_route', fail);
    defaultTarget = targetOf(defaultRoute, 'default_route');
  }

  let ported: Map<string, string> = new Map();
  if (root.has('ported_numbers')) {
    const node = root.get('ported_numbers', true) as Node;
    const csv = r.string(root, 'ported_numbers', 'ported_numbers', undefined);
    ported = loadPortedNumbers(path.resolve(path.dirname(file), csv), names, (why) => fail(node, 'ported_numbers', why));
  }
  return deepFreeze({ file, carriers, rules, defaultTarget, ported });
}

/** `number,carrier` lines (a header line and blank lines are skipped). */
function loadPortedNumbers(file: string, carriers: ReadonlySet<string>, fail: (why: string) => never): Map<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return fail(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const table = new Map<string, string>();
  text.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) return;
    const [rawNumber = '', rawCarrier = '', ...rest] = trimmed.split(',').map((s) => s.trim());
    if (i === 0 && !/^\+?\d/.test(rawNumber)) return; // a header
    const number = rawNumber.replace(/[\s-]/g, '');
    if (!/^\+\d{4,15}$/.test(number) || rest.length > 0) fail(`${file}:${i + 1}: expected +E.164 number,carrier, got ${JSON.stringify(trimmed)}`);
    if (!carriers.has(rawCarrier)) fail(`${file}:${i + 1}: no carrier is named ${JSON.stringify(rawCarrier)}`);
    table.set(number, rawCarrier);
  });
  return table;
}

type Fail = (node: Node | null | undefined, field: string, why: string) => never;

function checkKeys(map: YAMLMap, allowed: readonly string[], at: string, fail: Fail): void {
  const { isScalar } = yamlModule();
  for (const pair of map.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!allowed.includes(key)) fail(pair.key as Node, at ? `${at}.${key}` : key, `unknown field (known: ${allowed.join(', ')})`);
  }
}

function simulatedOf(node: Node, at: string, r: ReturnType<typeof reader>, fail: Fail): SimulatedCarrierConfig {
  const { isMap } = yamlModule();
  if (!isMap(node)) return fail(node, at, 'must be a mapping of outcomes, rate, receipt_delay');
  checkKeys(node, SIMULATED_KEYS, at, fail);
  const outcomes = { delivered: 0, undeliverable: 0, expired: 0, rejected: 0 };
  const given = node.get('outcomes', true);
  if (given === undefined) outcomes.delivered = 1;
  else {
    if (!isMap(given)) return fail(given as Node, `${at}.outcomes`, 'a mapping such as {delivered: 9, undeliverable: 1}');
    checkKeys(given, OUTCOMES, `${at}.outcomes`, fail);
    for (const o of OUTCOMES) if (given.has(o)) outcomes[o] = r.int(given, o, `${at}.outcomes.${o}`, 0, 0, 1_000_000);
    if (Object.values(outcomes).every((w) => w === 0)) fail(given, `${at}.outcomes`, 'at least one weight must be above 0');
  }
  return {
    outcomes,
    rate: r.int(node, 'rate', `${at}.rate`, 0, 0, 1_000_000),
    receiptDelayMs: r.duration(node, 'receipt_delay', `${at}.receipt_delay`, '200ms'),
  };
}

/** Typed reads of a mapping's fields, each failing with the field's line. */
function reader(fail: Fail) {
  const { isScalar, isSeq } = yamlModule();
  const scalarString = (node: Node | undefined, field: string): string => {
    if (!isScalar(node) || node.value === null || typeof node.value === 'object') return fail(node, field, 'must be a text value');
    return String(node.value);
  };
  const value = (m: YAMLMap, key: string, field: string, required: boolean): Node | undefined => {
    const node = m.get(key, true) as Node | undefined;
    if (node === undefined && required) fail(m, field, 'is required');
    return node;
  };
  return {
    scalarString,
    string(m: YAMLMap, key: string, field: string, fallback: string | undefined): string {
      const node = value(m, key, field, fallback === undefined);
      return node === undefined ? fallback! : scalarString(node, field);
    },
    name(m: YAMLMap, key: string, at: string): string {
      const node = value(m, key, `${at}.${key}`, true);
      const name = scalarString(node, `${at}.${key}`);
      if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(name)) fail(node, `${at}.${key}`, `${JSON.stringify(name)}: use letters, digits, - _ . (at most 63)`);
      return name;
    },
    int(m: YAMLMap, key: string, field: string, fallback: number | undefined, min: number, max: number): number {
      const node = value(m, key, field, fallback === undefined);
      if (node === undefined) return fallback!;
      const n = isScalar(node) ? Number(node.value) : Number.NaN;
      if (!Number.isInteger(n) || n < min || n > max || (isScalar(node) && typeof node.value === 'boolean')) {
        fail(node, field, `must be a whole number from ${min} to ${max}, got ${isScalar(node) ? JSON.stringify(node.value) : 'a collection'}`);
      }
      return n;
    },
    duration(m: YAMLMap, key: string, field: string, fallback: string): number {
      const node = value(m, key, field, false);
      try {
        return parseDuration(node === undefined ? fallback : scalarString(node, field));
      } catch (err) {
        return fail(node, field, (err as Error).message);
      }
    },
    oneOf<T extends string>(m: YAMLMap, key: string, field: string, allowed: readonly T[], fallback: T): T {
      const node = value(m, key, field, false);
      if (node === undefined) return fallback;
      const v = scalarString(node, field);
      if (!(allowed as readonly string[]).includes(v)) fail(node, field, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
      return v as T;
    },
    /** A text or a list of texts, each with its node. */
    list(m: YAMLMap, key: string, field: string): [Node, string][] {
      const node = value(m, key, field, false);
      if (node === undefined) return [];
      if (isSeq(node)) return node.items.map((n, i) => [n as Node, scalarString(n as Node, `${field}[${i}]`)]);
      return [[node, scalarString(node, field)]];
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Map)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
