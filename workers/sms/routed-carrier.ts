import type { CarrierConfig } from '../../lib/carriers-file';
import { HermodError, toHermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { carrierFailovers } from '../../lib/metrics';
import type { RouteDecision, RouteInput } from '../../core/domain/route-matcher';
import { planSms } from '../../core/domain/sms-segments';
import type { OutboundJob } from '../../core/ports/bus-payloads';
import type { HotState } from '../../core/ports/state';
import { isHeldBack, withTakenPartsRoute, type Carrier, type Handover } from '../carrier';
import { createCarrierHealth, type CarrierHealth } from './carrier-health';
import type { CarrierStatus } from './carrier-status';
import { isThrottled, type SmppCarrier } from './smpp-carrier';
import { createSubmitRate } from './submit-rate';

export interface RoutedCarrier extends Carrier {
  /** Each carrier's binds, window, submit rate and last error, as this worker sees them. */
  statuses(): CarrierStatus[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The SMS channel's carrier: each message goes to the first carrier of its
 * route (route-matcher.ts) that has a bind up and is not past its error
 * threshold, within that carrier's submits per second shared by every worker
 * through hot state. A carrier that throttles is waited for (it alone); a
 * message whose submit never reached the wire moves on at once; one whose
 * submit was written and then failed is handed back to the channel worker,
 * whose retry routes it again, so nothing is submitted twice on purpose.
 */
/** What the `submitted` event says of the route: `route nz-21 → carrier alpha (failover from bravo)`. */
function routeDetail(rule: string, carrier: string, passedOver: readonly string[]): string {
  return `route ${rule} → carrier ${carrier}${passedOver.length > 0 ? ` (failover from ${passedOver.join(', ')})` : ''}`;
}

/** The detail of a route's first carrier, made once per rule and carrier: the same text for most messages. */
const directDetails = new Map<string, Map<string, string>>();
function directDetail(rule: string, carrier: string): string {
  let byCarrier = directDetails.get(rule);
  if (!byCarrier) directDetails.set(rule, (byCarrier = new Map()));
  let detail = byCarrier.get(carrier);
  if (detail === undefined) {
    if (byCarrier.size >= 1000) byCarrier.clear();
    byCarrier.set(carrier, (detail = routeDetail(rule, carrier, [])));
  }
  return detail;
}

export function createRoutedCarrier(deps: {
  carriers: readonly SmppCarrier[];
  configs: readonly CarrierConfig[];
  decide: (m: RouteInput) => RouteDecision;
  state: HotState;
  log: Logger;
  /** How long a message waits for a carrier of its route to come up before it is handed back for a later retry. */
  waitForCarrierMs?: number;
}): RoutedCarrier {
  const waitMs = deps.waitForCarrierMs ?? 30_000;
  const byName = new Map(deps.carriers.map((c) => [c.name, c]));
  const health = new Map<string, CarrierHealth>(deps.configs.map((c) => [c.name, createCarrierHealth(c.errorThreshold, c.errorCooldownMs)]));

  const rates = new Map(
    deps.configs.filter((c) => c.maxSubmitsPerSecond > 0).map((c) => [c.name, createSubmitRate(deps.state, c.name, c.maxSubmitsPerSecond)]),
  );

  return {
    // Spans and logs name the protocol (`submit smpp`); the carrier chosen is in the submitted event's detail.
    name: 'smpp',
    async send(job: OutboundJob, onWritten?: () => void, handover?: Handover) {
      const decision = deps.decide({ id: job.id, destination: job.destination, applicationId: job.applicationId, source: job.source, channel: job.channel });
      const deadline = Date.now() + waitMs;
      for (;;) {
        const now = Date.now();
        const passedOver: string[] = [];
        const detailOf = (carrier: string): string =>
          passedOver.length > 0 ? routeDetail(decision.rule, carrier, passedOver) : directDetail(decision.rule, carrier);
        let chosen: SmppCarrier | undefined;
        for (const name of decision.carriers) {
          const c = byName.get(name);
          if (c && c.bindsUp > 0 && !health.get(name)!.coolingDown(now)) {
            chosen = c;
            break;
          }
          passedOver.push(name);
        }
        if (!chosen) {
          if (now >= deadline) throw new HermodError('unavailable', `no carrier of route ${decision.rule} (${decision.carriers.join(', ')}) is up`);
          await sleep(100);
          continue;
        }
        const h = health.get(chosen.name)!;
        if (h.backoffUntil > now) {
          await sleep(h.backoffUntil - now);
          continue;
        }
        const rate = rates.get(chosen.name);
        // No allowance to wait for on most carriers: no await (a turn of the event loop and a promise a message).
        const slot = rate ? await rate.take(planSms(job.content).segments.length) : undefined;
        let written = false;
        // Withdrawn unsent when its allowance's slot has passed before it could leave (see submit-rate.ts).
        let late = false;
        const holdBack = (): boolean => {
          if (handover?.holdBack?.()) return true;
          late = rate !== undefined && slot !== undefined && !rate.inSlot(slot);
          return late;
        };
        try {
          const { carrierIds } = await chosen.send(
            job,
            () => {
              written = true;
              onWritten?.();
            },
            { ...handover, holdBack },
          );
          h.succeeded();
          h.countSubmits(Date.now(), carrierIds.length);
          for (const p of passedOver) carrierFailovers.inc({ carrier: p });
          return { carrierIds, detail: detailOf(chosen.name) };
        } catch (err) {
          // A long message refused after the carrier took some of its parts: the rejection names the route they went by.
          withTakenPartsRoute(err, detailOf(chosen.name));
          // Withdrawn because its allowance went stale: ask for a new one.
          if (late && isHeldBack(err)) continue;
          // Withdrawn by the operator (a paused or cancelled campaign): the channel worker decides, not another carrier.
          if (isHeldBack(err)) throw err;
          const e = toHermodError(err);
          if (isThrottled(err)) {
            h.throttled(Date.now());
            if (Date.now() < deadline) continue;
            throw e;
          }
          if (!e.retryable) throw e;
          if (!written) {
            // Never on the wire (the bind went down in between): safe to route again at once.
            await sleep(10);
            continue;
          }
          h.failed(Date.now(), e.message);
          deps.log.debug('carrier error after the submit was written; the channel worker retries', { carrier: chosen.name, id: job.id, err: e });
          throw e;
        }
      }
    },
    // Each carrier id names the carrier that gave it (its `<name>:` prefix): each carrier is asked about its own. Ids
    // of no carrier in the file (one removed since) cannot be asked about: if none can, the question is unaskable, not
    // an answer that the message is still on its way. One carrier failing keeps the others' answers.
    async query(job, carrierIds) {
      const askEach = deps.configs.flatMap((config) => {
        const carrier = byName.get(config.name);
        const own = carrierIds.filter((id) => id.startsWith(config.idPrefix));
        return carrier?.query && own.length > 0 ? [carrier.query(job, own)] : [];
      });
      if (askEach.length === 0)
        throw new HermodError('unprocessable', `no SMS carrier in the carriers file gave ${carrierIds.join(', ')}, or can be asked about it`);
      const answers = await Promise.allSettled(askEach);
      const answered = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
      const failed = answers.flatMap((a) => (a.status === 'rejected' ? [a.reason as unknown] : []));
      // Retryable first, so the question is asked again when any carrier may answer later.
      if (failed.length === askEach.length) throw failed.find((err) => toHermodError(err).retryable) ?? failed[0];
      for (const err of failed) deps.log.debug('a carrier did not answer a question; the others’ answers are reported', { id: job.id, err });
      return answered;
    },
    // Asked before every send: a carrier with a bind up answers with a promise already settled.
    ready: () => {
      const up = deps.carriers.find((c) => c.bindsUp > 0);
      if (up) return up.ready();
      return Promise.any(deps.carriers.map((c) => c.ready())).catch(() => Promise.reject(new HermodError('unavailable', 'every SMS carrier is closed')));
    },
    onReport(listener) {
      for (const c of deps.carriers) c.onReport(listener);
    },
    onInbound(listener) {
      for (const c of deps.carriers) c.onInbound(listener);
    },
    async close() {
      await Promise.all(deps.carriers.map((c) => c.close()));
    },
    statuses() {
      const now = Date.now();
      return deps.carriers.map((c) => {
        const h = health.get(c.name)!;
        return {
          carrier: c.name,
          binds: c.binds,
          bindsUp: c.bindsUp,
          state: c.bindsUp === 0 ? 'down' : h.coolingDown(now) || h.backoffUntil > now ? 'failing' : 'up',
          windowInUse: c.windowInUse,
          submitsPerSecond: h.submitsPerSecond(now),
          lastError: h.lastError,
          lastErrorAt: h.lastErrorAt,
        };
      });
    },
  };
}
