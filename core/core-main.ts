import os from 'node:os';
import path from 'node:path';
import { coreLeasesOf, holdCoreLeases } from './core-leases';
import { ensureBootstrapApplication } from './accounts/bootstrap-application';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/log';
import { trackEntries, watchHistoryEngineMemory } from '../lib/metrics';
import { createGrpcCredentials } from '../lib/grpc-credentials';
import { listenError } from '../lib/listen-error';
import { openBus, openHistory, openState } from './adapters/open-adapters';
import { createAccounts } from './accounts/accounts';
import { createBlockLists } from './accounts/block-lists';
import { watchHotStateLoss } from './messages/hot-state-loss-watch';
import { keepScreeningListsLoaded } from './accounts/screening-lists';
import { untilHotStateAnswers } from './adapters/until-hot-state-answers';
import { bindServer, checkPortFree, createCoreGrpcServer } from './grpc/core-grpc-server';
import { createMessageIntake } from './messages/message-intake';
import { createMessageReader } from './messages/message-reader';
import { createRecentMessages } from './messages/recent-messages';
import { recoverUnfinished } from './messages/recovery';
import { askCarriersAboutReceipts } from './messages/receipt-queries';
import { openOwedReceiptQuestions } from './messages/owed-receipt-questions';
import { rememberSendersFromHistory } from './messages/senders-from-history';
import { createBatchedMessageLookup } from './messages/batched-message-lookup';
import { STATUS_READER, startStatusConsumer } from './messages/status-consumer';
import { createDeferredSends, type AttemptRetries } from './messages/deferred-sends';
import { startBusLagMonitor } from './messages/bus-lag-monitor';
import { INBOUND_READER, startInboundConsumer } from './messages/inbound-consumer';
import { untilConsumed } from './messages/until-consumed';
import { createNumericIds } from './messages/numeric-ids';
import { createLinkShortener } from './messages/link-shortener';
import { createCallbackInterest } from './callbacks/callback-interest';
import { createCallbackProducer } from './callbacks/callback-producer';
import { startCallbackDispatcher } from './callbacks/callback-dispatcher';
import { openCallbackOutbox } from './callbacks/callback-outbox';
import { createCallbackLedger } from './callbacks/callback-ledger';
import { createStatusRecorder, type StatusChange } from './messages/status-recorder';
import { createMemberImporter } from './campaigns/member-import';
import { startCampaignRunner } from './campaigns/campaign-runner';
import { createTemplates } from './campaigns/templates';
import { createCampaignResponder } from './campaigns/campaign-responder';
import { createCampaignControl, restoreCampaignControls } from './campaigns/campaign-control';
import { createCampaignDryRun } from './campaigns/campaign-dry-run';
import { createImIntake } from './im/im-intake';
import { startImOrchestrator } from './im/im-orchestrator';
import { createImRateBudget } from './im/im-rate-budget';
import { isFinal } from './domain/message-status';
import type { Bus } from './ports/bus';
import type { HotState } from './ports/state';

export interface RunningCore {
  port: number;
  /** For the supervisor's ready message. */
  ports: { grpc: number };
  stop(): Promise<void>;
}

export interface CoreOptions {
  /**
   * What runs in core's process on core's own bus and hot state: the channel
   * worker pools, which the composition root (bin/run-role.ts) passes when
   * core runs them (the in-process bus, or HERMOD_CORE_RUNS_WORKERS). Started
   * once statuses are consumed, stopped once core hands over nothing more.
   */
  beside?: (deps: { bus: Bus; state: HotState }) => Promise<{ stop(): Promise<void> }>;
}

/**
 * The core role: gRPC for the gateways, message intake and status recording
 * on the configured bus, hot state and history.
 */
export async function runCore(config: Readonly<Config>, log: Logger, options: CoreOptions = {}): Promise<RunningCore> {
  // First: a port another core holds stops this start before it opens history, logs in to a carrier or starts a worker.
  await checkPortFree(config.coreAddress).catch(coreAddressError(config.coreAddress));
  const history = await openHistory(config, log);
  watchHistoryEngineMemory(() => history.engineMemoryBytes());
  const state = await openState(config.adapters, { dataDir: config.dataDir, fsync: config.journalFsync, log }, log);
  await untilHotStateAnswers(state, log);
  // Before the bus: a second core that may not run reads nothing of it.
  const leases = await holdCoreLeases({
    state,
    leases: coreLeasesOf(config.adapters, config.coreInstance),
    holder: `${os.hostname()} ${config.dataDir}`,
    log,
  });
  const bus = await openBus(config.adapters, log);
  const recorder = createStatusRecorder({ history, state });
  const recent = createRecentMessages({ maxAgeMs: config.recentMessagesMaxAgeMs });
  const untrackRecent = trackEntries({ recent_messages: () => recent.size });
  const numericIds = createNumericIds(config.coreInstance);
  const shortener = createLinkShortener({ links: history, baseUrl: config.shortLinkBase });
  const accounts = createAccounts({ applications: history, optOuts: history });
  const blockLists = createBlockLists({ store: history, applications: history, state });
  const intake = createMessageIntake({
    history,
    state,
    bus,
    recorder,
    recent,
    numericIds,
    shortener,
    log,
    // Tried again until the bus takes them; the messages are durable, and a stop leaves them to recovery at the next start.
    // A warning while the bus may be electing a leader; an error once it has refused them for a minute, or gave up on one.
    onDispatchError: (err, at) =>
      log[at.givenUp || at.failingForMs >= 60_000 ? 'error' : 'warn'](
        at.rejected
          ? 'a message is too large for its channel’s message bus; it is rejected'
          : at.givenUp
            ? 'could not hand accepted messages to their channel; left to recovery at the next start'
            : 'could not hand accepted messages to their channel; trying again',
        { err, ...at },
      ),
    // From the settings cache: a quota set on another core takes effect here within its lifetime (10 s).
    quotaOf: async (id) => (await accounts.callbackSettings(id))?.quota,
    keyedHistoryCheckMs: config.idempotencyHistoryCheckMs,
    scheduledDir: path.join(config.dataDir, 'scheduled'),
    schedulerMemoryWindowMs: config.schedulerMemoryWindowMs,
    ownerOfAddress: (address) => accounts.ownerOfAddress(address),
  });
  const reader = createMessageReader({ history, state, recent });

  if (config.bootstrap) await ensureBootstrapApplication(accounts, config.bootstrap, log);

  // Opt-outs and block lists are durable in history; hot state may be new (in-process) or shared (Redis), and a Redis may lose them.
  const screeningLists = await keepScreeningListsLoaded({
    state,
    scopes: async () => ['', ...(await accounts.list()).map((a) => a.id)],
    load: async (scopes) => {
      const wanted = new Set(scopes);
      await state.setOptOuts((await history.listOptOuts()).filter((o) => wanted.has(o.applicationId)));
      await blockLists.load(scopes);
    },
    // The answers of recent Idempotency-Keys went with the lists: keyed sends look in history again for a while.
    onLost: () => intake.hotStateLost(),
    log,
  });
  // Another core may have found the loss first (and loaded the lists again): each core hears of it here.
  // With the bus on the same Redis, its streams went with the data: what they held is handed over again (below).
  const busSharesHotState = config.adapters.bus === 'redis' && config.adapters.state === 'redis';
  // A loss heard before core is ready to deal with it (the looks run every second from here) is owed at once and
  // dealt with once core is ready: the next look, having marked Redis, would not hear of it again.
  let lostBeforeReady = false;
  let busLost = (): void => {
    lostBeforeReady = true;
    if (busSharesHotState) owedQuestions.owe(Date.now());
  };
  // Owed before the first look, which marks Redis: a core killed between the two would leave the next start none the
  // wiser. Owed no more at once if Redis was not empty and nothing was owed before.
  const owedQuestions = openOwedReceiptQuestions(path.join(config.dataDir, 'state', 'receipt-questions-owed.json'), config.journalFsync, log);
  const owedBeforeStart = owedQuestions.before;
  const firstLook = Date.now();
  if (busSharesHotState) owedQuestions.owe(firstLook);
  const lossWatch = await watchHotStateLoss({
    state,
    onLost: () => {
      intake.hotStateLost();
      busLost();
    },
    log,
  });
  // Empty at this start (a new Redis, or one back without its data while core was down): the answers of recent
  // Idempotency-Keys may have gone with it, as in a loss heard later.
  if (lossWatch.emptyAtStart) intake.hotStateLost();
  else if (busSharesHotState && owedBeforeStart === undefined) owedQuestions.paid(firstLook);
  accounts.onCreated((applicationId) =>
    // The next look marks it if this fails; meanwhile its sends are refused as retryable.
    screeningLists.created(applicationId).catch((err) => log.warn("could not mark a new application's opt-outs and block lists loaded", { err })),
  );
  // Before any worker or fan-out runs: paused and cancelled campaigns stay so across restarts, whatever the hot state.
  await restoreCampaignControls({ store: history.campaigns, state, recorder });
  // Callbacks owed are journaled in the data directory: the in-process bus forgets them on a crash.
  const outbox = openCallbackOutbox({ dir: path.join(config.dataDir, 'callbacks'), log, fsync: config.journalFsync, inMemory: config.callbacks.inMemory });
  const untrackOutbox = trackEntries({ callbacks_owed: () => outbox.inMemory });
  // A message another core accepted is in history after that core's next flush: look again after one, and after a few.
  const lookup = createBatchedMessageLookup({ history, log, retryDelaysMs: [config.historyFlushMs + 1000, 4 * config.historyFlushMs + 2000] });
  const callbacks = createCallbackProducer({ bus, lookup, recent, log, outbox, busKeepsRecords: config.adapters.bus !== 'memory' });
  // Listening before statuses flow: a status recorded without its listener would have no callback.
  const wantsCallback = createCallbackInterest(accounts, recent);
  recorder.onApplied((change) => wantsCallback(change) && callbacks.statusChanged(change));
  // Intelligent Messaging hears every status from now on: the channel workers report from before the orchestrator
  // starts, and its own resuming hands attempts to them (fallbacks whose time passed while core was down). What is
  // applied before it is listening waits here, and is told to it, in order, once it is.
  let imListener: ((change: StatusChange) => void) | undefined;
  // Attempts a carrier keeps refusing for now wait with the orchestrator, once it runs.
  let orchestratorStarted!: (orchestrator: AttemptRetries) => void;
  const orchestratorRunning = new Promise<AttemptRetries>((resolve) => (orchestratorStarted = resolve));
  const beforeImListens: StatusChange[] = [];
  recorder.onApplied((change) => (imListener ? imListener(change) : beforeImListens.push(change)));
  // Last, after every listener that reads the message: a final status lets it leave memory soon.
  recorder.onApplied((change) => isFinal(change.status) && recent.finished([change.messageId]));
  const respond = createCampaignResponder({ store: history.campaigns, intake, recent, history, log });
  // Each callback try and its answer, for the admin API's Operations service.
  const ledger = createCallbackLedger();
  // Side by side: on Kafka each subscription waits up to 2 s for its group's join, which after a kill -9
  // waits for the dead member's session to run out; one after the other, those waits added up.
  const [statusSubscription, inboundSubscription, dispatcher] = await Promise.all([
    startStatusConsumer({
      bus,
      state,
      history,
      recorder,
      log,
      heldFile: { path: path.join(config.dataDir, 'state', 'held-delivery-reports.jsonl'), fsync: config.journalFsync },
      deferred: createDeferredSends({ history, state, intake, attempts: () => orchestratorRunning, log }),
    }),
    startInboundConsumer({
      bus,
      state,
      history,
      optOuts: history,
      recent,
      numericIds,
      log,
      ownerOfAddress: (address) => accounts.ownerOfAddress(address),
      dedupWindowMs: config.moDedupWindowMs,
      onReplies: (r, knownAs) => callbacks.repliesReceived(r, knownAs),
      respond,
    }),
    startCallbackDispatcher({
      bus,
      ledger,
      accounts,
      log,
      outbox,
      busKeepsRecords: config.adapters.bus !== 'memory',
      ...config.callbacks,
    }),
  ]);
  const pools = await options.beside?.({ bus, state });
  // What was accepted before this instant and is unfinished is handed over again once core listens (below); what
  // core takes from here on (campaigns due now, then API calls) it hands over itself.
  const recoverBefore = Date.now();
  if (config.adapters.state === 'memory') {
    const addresses = await rememberSendersFromHistory({ history, state });
    if (addresses > 0) log.info('learnt from history which applications send from which addresses', { addresses });
  }
  // Numeric ids reserved by campaigns before this start stay theirs.
  numericIds.skipPast(await history.campaigns.maxReservedNumericId());
  // Side by side too (each its own subscription).
  const [campaignRunner, orchestrator] = await Promise.all([
    startCampaignRunner({ store: history.campaigns, bus, intake, state, history, log, ...config.campaigns }),
    startImOrchestrator({
      bus,
      state,
      history,
      im: history.im,
      recorder,
      numericIds,
      notices: callbacks,
      recent,
      log,
      defaultTimeoutSeconds: config.im.defaultTimeoutMs / 1000,
      wabSender: config.channels.wab.sender,
    }),
  ]);
  const templates = createTemplates({ store: history.campaigns, applications: history, numericIds });
  const importMembers = createMemberImporter({
    store: history.campaigns,
    state,
    numericIds,
    templateContent: (applicationId, template) => templates.contentFor(applicationId, template),
    onCampaign: (c) => campaignRunner.add(c),
    ownerOfAddress: (address) => accounts.ownerOfAddress(address),
  });
  const lagMonitor = startBusLagMonitor(bus, log);
  const campaignControl = {
    control: createCampaignControl({ store: history.campaigns, applications: history, state, runner: campaignRunner, recorder, log }),
    dryRun: createCampaignDryRun({ store: history.campaigns, applications: history, state, templates, ratePerSecond: config.campaigns.ratePerSecond }),
  };

  orchestratorStarted(orchestrator);
  for (const change of beforeImListens.splice(0)) orchestrator.statusApplied(change);
  imListener = (change) => orchestrator.statusApplied(change);
  const imIntake = createImIntake({ im: history.im, intake, accounts, numericIds, defaultAttempts: config.im.defaultAttempts });

  const { server, endSendStreams } = createCoreGrpcServer({
    intake,
    reader,
    accounts,
    blockLists,
    shortener,
    state,
    idempotencyTtlMs: config.idempotencyTtlMs,
    idempotencyLeaseMs: Math.min(config.idempotencyLeaseMs, config.idempotencyTtlMs),
    operations: { state, bus, history, ledger, owedByApplication: () => outbox.owedByApplication() },
    campaigns: { store: history.campaigns, applications: history, history, importMembers, templates, state },
    routes: { applications: history, reader, history },
    campaignControl,
    im: {
      accept: imIntake,
      bus,
      applications: history,
      im: history.im,
      rateBudget: createImRateBudget({
        state,
        limitOf: async (id) => (await accounts.callbackSettings(id))?.imRateLimit ?? -1,
        defaultLimit: config.im.rateLimit,
      }),
    },
  });
  const grpc = await bindServer(server, config.coreAddress, createGrpcCredentials(config.grpcTls).server()).catch(coreAddressError(config.coreAddress));
  const port = grpc.port;
  log.info('core listening', {
    grpc: config.coreAddress.replace(/:\d+$/, `:${port}`),
    dataDir: config.dataDir,
    bus: config.adapters.bus,
    state: config.adapters.state,
    history: config.adapters.history,
  });
  // After listening: thousands of unfinished messages on Kafka and Redis kept a restarted core from listening for
  // over a minute (an operator's trial), every gateway answering 503 meanwhile. History failing to answer is tried
  // again each second; a stop ends it between pages, and the next start goes on with what is left.
  let stopping = false;
  const recovering = recoverUnfinished({
    history,
    state,
    intake,
    recent,
    log,
    // Only to the callbacks: the rest heard `accepted` when it was stored, or has no use for it now.
    tellAccepted: (changes) => {
      for (const change of changes) if (wantsCallback(change)) callbacks.statusChanged(change);
    },
    acceptedBefore: recoverBefore,
    stopping: () => stopping,
    retryMs: 1000,
  }).catch((err: unknown) => log.error('recovering unfinished messages failed', { err }));
  /**
   * The Redis bus shares hot state's Redis: one back without its data lost the jobs its streams held for the workers
   * (a message answered 202 stayed `queued` until core restarted: an SRE trial). Every message not yet with the
   * carrier is handed to its channel again, as at a start: one whose `submitted` went with the streams may go twice,
   * none is lost. The delivery receipts on the streams went too (a trial's campaign left 12 of 4,000 messages
   * `submitted` for good): the carriers are asked about every SMS message still waiting for one (query_sm), as
   * long as the data directory says they are owed questions, across restarts. A loss heard while an earlier one is
   * being dealt with is dealt with after it.
   */
  let redispatching: Promise<unknown> | undefined;
  let handOverBefore: number | undefined;
  const dealWithLosses = (): void => {
    if (redispatching) return;
    redispatching = recovering
      .then(async () => {
        while (!stopping) {
          const lostAt = handOverBefore;
          handOverBefore = undefined;
          if (lostAt !== undefined)
            await recoverUnfinished({ history, state, intake, recent, log, acceptedBefore: lostAt, stopping: () => stopping, retryMs: 1000 });
          const owed = owedQuestions.before;
          if (owed !== undefined) {
            await askCarriersAboutReceipts({ history, bus, log, acceptedBefore: owed, stopping: () => stopping, retryMs: 1000 });
            if (stopping) break;
            owedQuestions.paid(owed);
          }
          if (handOverBefore === undefined && owedQuestions.before === undefined) break;
        }
      })
      .catch((err: unknown) => log.error('dealing with what a Redis loss took failed', { err }))
      .finally(() => {
        redispatching = undefined;
      });
  };
  if (busSharesHotState)
    busLost = () => {
      if (stopping) return;
      log.warn('the Redis bus lost its streams with hot state; handing every unfinished message to its channel again');
      const lostAt = Date.now();
      handOverBefore = lostAt;
      owedQuestions.owe(lostAt);
      dealWithLosses();
      // The callbacks its streams held for the senders, kept in this core's outbox until a sender took them.
      callbacks.busLost();
    };
  if (lostBeforeReady) busLost();
  // Redis back empty while core was down (an operator's trial left 1,161 messages `submitted` for good): the start's
  // recovery hands over what waited for a worker; the receipts its streams held are asked about as after a loss. A
  // core killed before it had asked left the questions owed in the data directory, and this start asks them.
  if (lossWatch.emptyAtStart && busSharesHotState)
    log.info(
      'hot state was empty at this start (a new Redis, or one back without its data); looking for messages still waiting for a receipt, to ask the carriers about them',
    );
  else if (owedBeforeStart !== undefined)
    log.info(
      'questions to the carriers about receipts a Redis loss may have taken were owed when the last run stopped (it had not asked them all, or stopped before it had looked for a loss); asking them now',
    );
  if (owedQuestions.before !== undefined) dealWithLosses();
  // The callbacks published before the stop and not yet taken went with it too: published again.
  if (lossWatch.emptyAtStart && busSharesHotState) callbacks.busLost();

  return {
    port,
    ports: { grpc: port },
    async stop() {
      // Refuse new calls, finish the ones in progress, then let the pipeline run dry.
      await endSendStreams();
      await Promise.all([grpc.close(), new Promise<void>((resolve) => server.tryShutdown(() => resolve()))]);
      stopping = true;
      await recovering;
      await redispatching;
      if (owedQuestions.before !== undefined)
        log.info('questions to the carriers about receipts a Redis loss may have taken are left for the next start, which asks them');
      lagMonitor.stop();
      screeningLists.stop();
      lossWatch.stop();
      await campaignRunner.stop();
      await orchestrator.stop();
      await intake.drain();
      await pools?.stop();
      // On the in-process bus, what the workers reported as they stopped (a send that got no answer, `frozen`) is
      // nowhere else: recorded before the consumers close, or the next start would hand the message over again.
      if (bus.local) await untilConsumed(bus, [STATUS_READER, INBOUND_READER], 5_000, log);
      await statusSubscription.close();
      await inboundSubscription.close();
      await callbacks.drain();
      await dispatcher.stop();
      await recorder.drain();
      await shortener.drain();
      await bus.close();
      // Renewed until here, so it holds while the drain runs; given up now, so a core started elsewhere need not wait it out.
      await leases.release();
      await state.close();
      await history.close();
      outbox.close();
      untrackRecent();
      untrackOutbox();
    },
  };
}

/** A failed listen on HERMOD_CORE_ADDRESS as the one line naming it (listen-error.ts). */
function coreAddressError(address: string) {
  return (err: unknown): never => {
    const [, host = '', port = '0'] = /^\[?(.*?)\]?:(\d+)$/.exec(address) ?? [];
    throw listenError(err, 'HERMOD_CORE_ADDRESS', host, Number(port), 'another core');
  };
}
