import type { AccountStore } from '../ports/account-store';
import { applicationNamed } from '../accounts/application-named';
import type { CampaignProgressCounts, CampaignRecord, CampaignStore } from '../ports/campaign-store';
import type { HotState } from '../ports/state';
import type { Logger } from '../../lib/log';
import { HermodError } from '../../lib/errors';
import { campaignMessageRange } from './campaign-message-ids';
import { CANCELLED, type CampaignRunner } from './campaign-runner';
import type { StatusRecorder } from '../messages/status-recorder';

/** An application by its name, or failing that its id. */
export async function applicationByRef(applications: AccountStore, ref: string): Promise<{ id: string; name: string }> {
  if (!ref) throw new HermodError('missing_attrib', 'application is required');
  const app = (await applicationNamed(applications, ref)) ?? (await applications.listApplications()).find((a) => a.id === ref);
  if (!app) throw new HermodError('not_found', `no application named ${ref}`);
  return app;
}

/** What an operator sees of a campaign (CampaignControl's CampaignProgress). */
export interface CampaignView {
  application: string;
  campaignId: string;
  name: string;
  state: 'scheduled' | 'running' | 'paused' | 'cancelled' | 'finished';
  members: number;
  created: Date;
  schedule: Date;
  submitted: number;
  delivered: number;
  failed: number;
  blocked: number;
  deficient: number;
  dead: number;
  remaining: number;
  currentRate: number;
  secondsLeft: number;
}

/** Submits per second are measured over this window. */
const RATE_WINDOW_MS = 10_000;

/**
 * Operators' control of campaigns. The word itself (running, paused,
 * cancelled) is written to hot state first, which every fan-out and worker
 * reads (a pause takes effect within a second on every core), then to the
 * campaign's row in history, from which core restores it at start, so it
 * survives restarts whatever the hot state. Progress is counted from history,
 * the same latest statuses the campaign report shows.
 */
export function createCampaignControl(deps: {
  store: CampaignStore;
  applications: AccountStore;
  state: HotState;
  runner: CampaignRunner;
  recorder: StatusRecorder;
  log: Logger;
  now?: () => number;
}) {
  const { store, state, runner, log } = deps;
  const now = deps.now ?? Date.now;

  const applicationOf = (ref: string) => applicationByRef(deps.applications, ref);

  const campaignOf = async (application: string, campaignId: string): Promise<{ app: { id: string; name: string }; c: CampaignRecord }> => {
    const app = await applicationOf(application);
    const id = Number(campaignId);
    const c = /^\d{1,16}$/.test(campaignId) ? await store.getCampaign(app.id, id) : undefined;
    if (!c) throw new HermodError('not_found', `application ${app.name} has no campaign ${JSON.stringify(campaignId)}`);
    return { app, c };
  };

  const view = async (appName: string, c: CampaignRecord): Promise<CampaignView> => {
    const { lo, hi } = campaignMessageRange(c.id, 0, c.memberCount);
    const at = now();
    const n: CampaignProgressCounts = await store.progressRange(lo, hi, at - RATE_WINDOW_MS);
    const cancelled = c.state === 'cancelling' || c.state === 'cancelled';
    // The members it sends to: those removed at import as opted out never get a message, as duplicates and invalid ones never do.
    const members = c.memberCount - c.removedOptOuts;
    // Once the fan-out is done, members without a message (opted out since, left out) are not waiting for anything.
    // A cancel is done once its fan-out gave every member without a message one that ended dead: until then they
    // remain, and so do messages still queued until their workers end them dead, so every member is counted once.
    const fannedOut = c.state === 'sent' || c.state === 'cancelled';
    const remaining = (fannedOut ? 0 : Math.max(0, members - n.messages)) + n.waiting;
    const state: CampaignView['state'] = cancelled
      ? 'cancelled'
      : c.state === 'paused'
        ? 'paused'
        : remaining === 0
          ? 'finished'
          : c.state === 'scheduled' && c.scheduleAt > at
            ? 'scheduled'
            : 'running';
    const currentRate = state === 'running' ? n.handedSince / (RATE_WINDOW_MS / 1000) : 0;
    return {
      application: appName,
      campaignId: String(c.id),
      name: c.name,
      state,
      members,
      created: new Date(c.createdAt),
      schedule: new Date(c.scheduleAt),
      submitted: n.handed,
      delivered: n.delivered,
      failed: n.failed,
      blocked: n.blocked,
      deficient: n.deficient,
      dead: n.dead,
      remaining,
      currentRate,
      secondsLeft: remaining === 0 ? 0 : currentRate > 0 ? remaining / currentRate : -1,
    };
  };

  /** Writes the campaign's new state to history (its row is versioned by updated_at). */
  const save = async (c: CampaignRecord, state: CampaignRecord['state']): Promise<CampaignRecord> => {
    const next = { ...c, state, updatedAt: Math.max(now(), c.updatedAt + 1) };
    await store.upsertCampaign(next);
    return next;
  };

  const isCancelled = (c: CampaignRecord): boolean => c.state === 'cancelling' || c.state === 'cancelled';

  return {
    async list(application: string): Promise<CampaignView[]> {
      const apps = await deps.applications.listApplications();
      const names = new Map(apps.map((a) => [a.id, a.name]));
      const appId = application ? (await applicationOf(application)).id : '';
      const campaigns = await store.listCampaigns(appId);
      return Promise.all(campaigns.map((c) => view(names.get(c.applicationId) ?? c.applicationId, c)));
    },

    async show(application: string, campaignId: string): Promise<CampaignView> {
      const { app, c } = await campaignOf(application, campaignId);
      return view(app.name, c);
    },

    async pause(application: string, campaignId: string): Promise<CampaignView> {
      const { app, c } = await campaignOf(application, campaignId);
      if (isCancelled(c)) throw new HermodError('unprocessable', `campaign ${c.id} was cancelled: it cannot be paused`);
      // The word first (every worker reads it within a second); only a fan-out that is done (sent) may have nothing left, and counting tells.
      await state.setCampaignControl(c.id, 'paused');
      if (c.state === 'sent' && (await view(app.name, c)).state === 'finished') {
        await state.setCampaignControl(c.id, 'running');
        throw new HermodError('unprocessable', `campaign ${c.id} has finished: every member was handed to a carrier`);
      }
      const saved = c.state === 'paused' ? c : await save(c, 'paused');
      log.info('campaign paused', { campaign: c.id, application: app.name });
      return view(app.name, saved);
    },

    async resume(application: string, campaignId: string): Promise<CampaignView> {
      const { app, c } = await campaignOf(application, campaignId);
      if (isCancelled(c)) throw new HermodError('unprocessable', `campaign ${c.id} was cancelled: it cannot be resumed`);
      // As pause and cancel answer it: nothing is left to go on with.
      if (c.state === 'sent' && (await view(app.name, c)).state === 'finished')
        throw new HermodError('unprocessable', `campaign ${c.id} has finished: every member was handed to a carrier`);
      const parked = await state.setCampaignControl(c.id, 'running');
      const saved = c.state === 'paused' ? await save(c, c.scheduleAt > now() ? 'scheduled' : 'sending') : c;
      log.info('campaign resumed', { campaign: c.id, application: app.name, parked: parked.length });
      // What the workers parked goes out again, after the answer (if core stops first, they are still
      // queued in history and recovery hands them over at the next start); the fan-out hands out the
      // members without a message yet.
      runner
        .resend(saved, parked)
        .catch((err: unknown) => log.error('could not re-send parked campaign messages; recovery sends them at the next start', { err, campaign: c.id }));
      if (c.state === 'paused') runner.add(saved);
      return view(app.name, saved);
    },

    async cancel(application: string, campaignId: string): Promise<CampaignView> {
      const { app, c } = await campaignOf(application, campaignId);
      if (isCancelled(c)) {
        // Said twice, or a cancel a restart interrupted: finish it.
        if (c.state === 'cancelling') runner.add(c);
        return view(app.name, c);
      }
      // The word first (every worker reads it within a second); only a fan-out that is done (sent) may have nothing left to cancel, and counting tells.
      const parked = await state.setCampaignControl(c.id, 'cancelled');
      if (c.state === 'sent' && parked.length === 0 && (await view(app.name, c)).state === 'finished') {
        await state.setCampaignControl(c.id, 'running');
        throw new HermodError('unprocessable', `campaign ${c.id} has finished: every member was handed to a carrier`);
      }
      const saved = await save(c, 'cancelling');
      await endParked(deps.recorder, saved, parked);
      // Members without a message get one that ended dead; the workers end those still queued.
      runner.add(saved);
      log.info('campaign cancelled', { campaign: c.id, application: app.name, parked: parked.length });
      return view(app.name, saved);
    },
  };
}

export type CampaignControl = ReturnType<typeof createCampaignControl>;

/**
 * At core's start, before any worker or fan-out runs: hot state (perhaps new)
 * learns every paused and cancelled campaign from history; messages parked
 * under a cancel that a crash interrupted end `dead`.
 */
export async function restoreCampaignControls(deps: { store: CampaignStore; state: HotState; recorder: StatusRecorder }): Promise<void> {
  for (const c of await deps.store.listUnsentCampaigns()) {
    if (c.state === 'paused') await deps.state.setCampaignControl(c.id, 'paused');
    if (c.state === 'cancelling' || c.state === 'cancelled') {
      const parked = await deps.state.setCampaignControl(c.id, 'cancelled');
      await endParked(deps.recorder, c, parked);
    }
  }
}

/** Messages parked while the campaign was paused, now that it is cancelled: they end `dead`, never sent. */
async function endParked(recorder: StatusRecorder, c: CampaignRecord, messageIds: readonly string[]): Promise<void> {
  for (let i = 0; i < messageIds.length; i += 5000) {
    const at = Date.now();
    await recorder.record(
      messageIds
        .slice(i, i + 5000)
        .map((messageId) => ({ messageId, applicationId: c.applicationId, channel: 'sms', status: 'dead' as const, at, detail: CANCELLED })),
    );
  }
}
