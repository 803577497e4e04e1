import type { CarriersConfig, RouteRule, RouteTarget, SourceKind } from '../../lib/carriers-file';

/** What routing looks at of a message. */
export interface RouteInput {
  /** Used only to pick within a weighted split, so every attempt at one message picks the same carrier. */
  id: string;
  destination: string;
  applicationId: string;
  source: string;
  channel: string;
}

/** The rule that decided, and the carriers to try in order (the first is the choice, the rest its failover). */
export interface RouteDecision {
  rule: string;
  carriers: readonly string[];
}

/** The rule name of a decision made by the default route, and of one made by the ported-numbers table. */
export const DEFAULT_RULE = 'default';
export const PORTED_RULE = 'ported-number';

/** Digits of an E.164 number or prefix: `+64 21-555` → `6421555`. */
export function e164Digits(address: string): string {
  return address.replace(/\D/g, '');
}

/** Any letter makes a sender alphanumeric; digits alone (or none: the default sender) are a number. */
export function sourceKind(source: string): SourceKind {
  return /\p{L}/u.test(source) ? 'alphanumeric' : 'number';
}

export function ruleMatches(rule: RouteRule, m: RouteInput): boolean {
  if (rule.channels.length > 0 && !rule.channels.includes(m.channel)) return false;
  if (rule.applications.length > 0 && !rule.applications.includes(m.applicationId)) return false;
  if (rule.source !== undefined && rule.source !== sourceKind(m.source)) return false;
  if (rule.prefixes.length === 0) return true;
  const digits = e164Digits(m.destination);
  return rule.prefixes.some((p) => digits.startsWith(e164Digits(p)));
}

/**
 * The route of each message: the ported-numbers table first (a number that
 * moved network goes to the carrier it moved to), then the rules in order
 * (the first that matches wins), then the default route. Pure and total:
 * every message gets exactly one decision, and the same message the same one.
 */
export function createRouteMatcher(table: Pick<CarriersConfig, 'rules' | 'defaultTarget' | 'ported'>): (m: RouteInput) => RouteDecision {
  return (m) => {
    const rule = table.rules.find((r) => ruleMatches(r, m));
    const decided: RouteDecision = rule
      ? { rule: rule.name, carriers: order(rule.target, m.id) }
      : { rule: DEFAULT_RULE, carriers: order(table.defaultTarget, m.id) };
    const ported = table.ported.size > 0 ? table.ported.get(`+${e164Digits(m.destination)}`) : undefined;
    if (ported === undefined) return decided;
    return { rule: PORTED_RULE, carriers: [ported, ...decided.carriers.filter((c) => c !== ported)] };
  };
}

/** The carriers of a target in the order they are tried; a split puts its pick first, then the rest by weight. */
function order(target: RouteTarget, id: string): readonly string[] {
  if (target.kind !== 'split') return target.carriers;
  const total = target.weights.reduce((a, b) => a + b, 0);
  let point = unitHash(id) * total;
  let pick = target.carriers.length - 1;
  for (let i = 0; i < target.carriers.length; i++) {
    const w = target.weights[i]!;
    if (w > 0 && point < w) {
      pick = i;
      break;
    }
    point -= w;
  }
  const rest = target.carriers.map((c, i) => ({ c, w: target.weights[i]! })).filter((_, i) => i !== pick);
  rest.sort((a, b) => b.w - a.w);
  return [target.carriers[pick]!, ...rest.map((r) => r.c)];
}

/** FNV-1a of the id, as a number in [0, 1). */
function unitHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h / 4294967296;
}
