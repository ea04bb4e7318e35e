import type { Logger } from 'pino';
import { projections, recordProjections } from '../../projections/index.js';
import type { Config } from '../config.js';
import type { ErasureHook } from '../../commands/deletions/erasureSteps.js';
import { connectionErasureHook } from '../../commands/connections/connectionErasure.js';
import { ConnectionCredentials, ensureCredentialsCollection } from '../../commands/connections/connectionCredentials.js';
import { dataKeysOf } from './dataKeysOf.js';
import { OpeningEventStore } from '../crypto/openingEventStore.js';
import { PersonalSealer } from '../crypto/personalSealing.js';
import { EventOpener } from '../crypto/recordSealing.js';
import { PERSONAL_FIELDS } from '../../commands/shared/personalFields.js';
import { deletionJobHandler } from '../processes/deletions/deletionJobRunner.js';
import { ProjectorRuntime } from '../projector/projectorRuntime.js';
import { appliedThrough } from '../projector/appliedThrough.js';
import { ReactorRuntime } from '../projector/reactor.js';
import { userSubscriptionsReactor } from '../processes/sync/userSubscriptions.js';
import { etlJobHandlers } from '../processes/etl/etlWorker.js';
import { endLostEtlAttempts, sweepEtlJobs } from '../processes/etl/etlSweep.js';
import { queuedWorkErasure } from '../processes/jobs/queuedWorkErasure.js';
import { RETENTION_SWEEP_EVERY_MS, sweepExpired } from '../processes/retention/retentionSweep.js';
import { tusSweep } from '../processes/uploads/tusSweep.js';
import { uploadLocksOf } from '../processes/uploads/uploadLocks.js';
import { stagingRoot, UploadStaging } from '../rawstore/uploadStaging.js';
import { PollLoop } from '../shared/pollLoop.js';
import { JobRunner } from '../processes/jobs/jobRunner.js';
import { jobFeederReactor } from '../processes/jobs/jobFeeder.js';
import { reactorDeadLetters, reactorJobHandler } from '../processes/jobs/reactorJobs.js';
import { openWorkQueue } from './openWorkQueue.js';
import { jobHolderOf } from './leaseSettings.js';
import { EtlThreadPool } from '../processes/etl/etlPool.js';
import { etlParsers, importDecoders } from '../sources/registry.js';
import { removeStaleTemporaryFiles, temporaryFilesErasureHook } from '../sources/files/exportShared/temporaryFile.js';
import { importTempDir } from '../processes/etl/etlTask.js';
import { providerGrants } from '../sources/providerGrants.js';
import { tenantNameClaimsReactor } from '../processes/tenantNameClaims.js';
import { sha256Hex } from '../shared/secrets.js';
import { resolveAdminKey, resolveSealingKey } from './dataDir.js';
import { createLogger } from './logger.js';
import { RuntimeMonitor } from '../shared/runtimeStats.js';
import { recoveryJobHandler } from '../processes/webhooks/recoveryJob.js';
import { WebhookEngine } from '../processes/webhooks/webhookEngine.js';
import { deliveryErasure } from '../webhooks/deliveryErasure.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../webhooks/secretSealing.js';
import { sealingKeyringOf, valueSealerOf } from './sealingKeyringOf.js';
import { openStores } from './stores.js';
import { leaseSettingsOf } from './leaseSettings.js';
import { createSync, type SyncOptions } from '../processes/sync/syncWiring.js';
import { WebhookApplications } from '../server/webhookApplications.js';
import { indexInboundSecrets } from '../processes/inboundSecretIndex.js';
import { providerKeysProjection } from '../../projections/connections/providerKeysProjection.js';
import type { AppContext } from '../server/appContext.js';

/** How often each service process sweeps expired resumable uploads (src/processes/uploads/tusSweep.ts). */
const TUS_SWEEP_EVERY_MS = 10 * 60_000;

/**
 * `all`: projections, process managers and the ETL worker (the service). `projections`: read
 * models only (short CLI commands, which must not take over a running server's jobs).
 * `none`: nothing runs (rebuilds, status).
 */
export type ContextOptions = SyncOptions & {
  log?: Logger;
  runBackground?: boolean | 'all' | 'projections' | 'none';
  /** The webhook engine's clock (tests move it; the 5-day disable rule). */
  webhookClock?: () => number;
  /** Page cache of the embedded read store's connection (a rebuild wants a large one; stores.ts). */
  readCacheMiB?: number;
};

/** Wires stores, projections and process managers from the configuration. */
export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const log = options.log ?? createLogger(config.logLevel);
  const mode = options.runBackground === undefined || options.runBackground === true ? 'all' : options.runBackground === false ? 'none' : options.runBackground;
  // The service's event store writes and work queue on threads of their own (issue 37); a CLI command's in its thread.
  const storeThreads = mode === 'all';
  const stores = await openStores(config, { readCacheMiB: options.readCacheMiB, writerThread: storeThreads, httpThreadReadStore: storeThreads });
  const { readStore, rawStore } = stores;
  const admin = resolveAdminKey(config.dataDir, config.adminApiKey);
  const sealingKey = resolveSealingKey(config.dataDir, config.sealingKey);
  const dataKeys = dataKeysOf(config, stores.eventStore);
  // Everything the service reads comes opened, and personal fields are sealed as they are
  // appended (src/crypto/personalSealing.ts, recordSealing.ts; docs/erasure.md).
  const eventStore = new OpeningEventStore(stores.eventStore, new EventOpener(dataKeys), new PersonalSealer(dataKeys, PERSONAL_FIELDS));
  // Several service processes may share the stores: background work runs under leases (docs/architecture.md).
  const leases = (role: string) => (mode === 'none' ? undefined : leaseSettingsOf(config, readStore, role));
  const projectors = new ProjectorRuntime(eventStore, readStore, projections, log, {
    thread: mode === 'all' && config.projectorThread ? { config, names: recordProjections.map((p) => p.name) } : undefined,
    leases: leases('projections'),
    // Keys changed in the read model: webhooks open the providers' applications again (batches come only after start()).
    onBatch: (projection) => {
      if (projection === providerKeysProjection.name) webhookApplications.invalidate();
    },
    retry: config.projectionRetryDelaysMs ? { delaysMs: config.projectionRetryDelaysMs } : undefined,
  });
  const valueSealer = valueSealerOf(config);
  await ensureCredentialsCollection(readStore);
  const credentials = new ConnectionCredentials(readStore, dataKeys);
  const webhookApplications = new WebhookApplications({ readStore, sealer: valueSealer, providers: config.providers });
  // The work queue of background jobs (issue 26): claimed, leased and fenced per job (docs/architecture.md "Work queue").
  const queue = await openWorkQueue(config, {}, { thread: storeThreads });
  const holder = jobHolderOf(config);
  const sync = createSync(
    {
      queue,
      holder,
      config,
      eventStore,
      readStore,
      rawStore,
      dataKeys,
      sealer: valueSealer,
      settle: (position, names) => projectors.waitForIdle(position, undefined, names),
      kickEtl: () => jobs.kick(),
      log,
    },
    options,
  );
  const jobs = new JobRunner({ queue, holder, leaseMs: config.leases.leaseMs, log });
  const subscriptions = userSubscriptionsReactor({ eventStore, readStore, credentials, sealer: valueSealer, providers: config.providers, publicBaseUrl: config.publicBaseUrl, now: () => sync.worker.now(), log });
  const reactorList = [...sync.reactors, subscriptions, tenantNameClaimsReactor({ eventStore, log }), jobFeederReactor({ queue, eventStore, kick: () => jobs.kick() })];
  const reactors = new ReactorRuntime(eventStore, readStore, reactorList, log, leases('reactors'), reactorDeadLetters(queue, () => jobs.kick()));
  for (const r of reactorList) jobs.register(reactorJobHandler(eventStore, r));
  const erasureHooks: ErasureHook[] = [
    connectionErasureHook({ eventStore, readStore, credentials, sealer: valueSealer, grants: providerGrants, providers: config.providers }),
    sync.erasureHook,
    // Plaintext copies a crashed import left of the user's uploads, in any process sharing DATA_DIR.
    temporaryFilesErasureHook(importTempDir(config.dataDir)),
  ];
  const webhookSecrets = new WebhookSecrets(sealingKeyringOf(config, WEBHOOK_SECRET_SEALING));
  // contracts §17: what announces records waits until every record view reads them.
  const recordViews = recordProjections.map((p) => p.name);
  const webhooks = new WebhookEngine({
    eventStore,
    readStore,
    recordsReadable: (position, timeoutMs) => projectors.waitForIdle(position, timeoutMs, recordViews),
    secrets: webhookSecrets,
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    scheduleSeconds: config.webhookRetryScheduleSeconds,
    retentionDays: config.webhookDeliveryRetentionDays,
    now: options.webhookClock,
    log,
    leases: leases('webhooks'),
  });
  jobs.register(recoveryJobHandler({ eventStore, readStore }));
  jobs.register(deletionJobHandler({
    eventStore,
    readStore,
    rawStore,
    dataKeys,
    hooks: erasureHooks,
    queuedWork: queuedWorkErasure(jobs.queue, readStore),
    deliveries: deliveryErasure({ readStore, settle: (position, timeoutMs) => webhooks.settle(position, timeoutMs), log }),
    settle: (position, timeoutMs) => projectors.waitForIdle(position, timeoutMs),
    timeoutMs: config.deletionJobTimeoutMs,
    log,
  }));
  // Plaintext copies an import made while it ran (a crash left them behind) go before any import runs.
  if (mode === 'all') await removeStaleTemporaryFiles(importTempDir(config.dataDir));
  const etl = etlJobHandlers({
    eventStore,
    rawStore,
    parsers: etlParsers,
    importDecoders: importDecoders(importTempDir(config.dataDir)),
    dataKeys,
    log,
    threads: config.etlConcurrency,
    bulkThreads: config.etlBulkConcurrency,
    // ETL pool (src/processes/etl/etlPool.ts): jobs normalised on worker threads with their own store connections.
    pool: new EtlThreadPool(config, { log }),
  });
  for (const handler of etl.handlers) jobs.register(handler);
  const etlSweep = new PollLoop(
    async () => {
      // Attempts lost with their process first: one ended with attempts left is due again for the sweep.
      await endLostEtlAttempts(readStore, eventStore, queue);
      if ((await sweepEtlJobs(readStore, eventStore, queue)) > 0) jobs.kick();
    },
    30_000,
    (err) => log.warn({ err }, 'sweeping for ETL jobs without a queue job (or lost with their process) failed'),
  );
  // Expired consent states and connect sessions, a day past their expiry (issue 26, retention).
  const retentionSweep = new PollLoop(
    async () => {
      await sweepExpired(readStore, eventStore);
    },
    RETENTION_SWEEP_EVERY_MS,
    (err) => log.warn({ err }, 'sweeping expired consent states and connect sessions failed'),
  );
  // Resumable uploads never completed: abandoned and their staged bytes removed once expired, not only when next asked for.
  const uploadsSweep = tusSweep({ eventStore, readStore, staging: new UploadStaging(stagingRoot(config.dataDir)), locks: uploadLocksOf(readStore, config.leases), expiryMs: config.importUploadExpiryHours * 3_600_000 });
  const tusSweepLoop = new PollLoop(
    async () => {
      await uploadsSweep.run();
    },
    TUS_SWEEP_EVERY_MS,
    (err) => log.warn({ err }, 'sweeping expired resumable uploads failed'),
  );
  const runBackground = mode !== 'none';
  const runtime = new RuntimeMonitor();
  if (mode === 'all' || mode === 'projections') await projectors.start();
  if (mode === 'all') {
    // Physical deletion an erasure asked for and a process that died did not finish (its scrub's
    // copy keeps triggers on a live table until then): done now, in the background. Nothing
    // due: one read of each file, nothing else.
    const embedded = [readStore, stores.eventStore].filter((store) => store.kind === 'sqlite');
    void Promise.all(embedded.map((store) => store.purgeDeleted?.())).catch((err: unknown) =>
      log.warn({ err }, 'finishing an interrupted scrub failed; the next erasure tries again'),
    );
    // Keys set before their inbound secret was indexed get it (once; in the background: it waits for the read model).
    void indexInboundSecrets({ eventStore, readStore, sealer: valueSealer, settle: () => projectors.waitForIdle(undefined, 120_000, [providerKeysProjection.name]), log }).catch((err: unknown) =>
      log.warn({ err }, 'indexing inbound secrets of provider keys failed; it is tried again at the next start'),
    );
    await reactors.start();
    // Before the deletion runner: a job it resumes waits for the engine to read its announcement.
    await webhooks.start();
    jobs.start();
    etlSweep.start();
    tusSweepLoop.start();
    retentionSweep.start();
    if (sync.polling) sync.worker.start();
  } else {
    await webhooks.init();
  }
  if (mode === 'none') {
    await projectors.init();
  }
  return {
    config,
    log,
    eventStore,
    readStore,
    rawStore,
    jobs,
    etl: jobs,
    sync: sync.worker,
    projectors,
    reactors,
    deletions: jobs,
    erasureHooks,
    dataKeys,
    adminKeyHash: sha256Hex(admin.key),
    generatedAdminKey: admin.generated ? admin.key : null,
    sealingKey,
    valueSealer,
    credentials,
    grants: providerGrants,
    webhookApplications,
    runtime,
    webhooks,
    webhookSecrets,
    settle: async (position, names) => {
      if (runBackground) await projectors.waitForIdle(position, undefined, names);
    },
    // The raw log: only positions are read, nothing needs opening.
    recordsApplied: () => appliedThrough(stores.eventStore, readStore, recordProjections),
    close: async () => {
      runtime.close();
      etlSweep.stop();
      tusSweepLoop.stop();
      retentionSweep.stop();
      // A stop that does not end leaves the process hanging at shutdown: each names itself once it
      // has taken CLOSE_STEP_WARN_MS, so the operator (and a test) sees what the close waits on.
      const step = (what: string, stopping: Promise<unknown>) => awaitNamed(stopping, what, log);
      // Every claimer stops taking work at once, before anything is awaited: a stopping process
      // that went on pulling took a new start's backfills and called its own, older provider
      // address with the new grant's tokens (issue 36, the demo's restart). Running jobs are told
      // to stop and hand their jobs back, due at once (JobRunner.stop).
      const stopped = Promise.all([step('the webhook engine', webhooks.stop()), step('the job runner', jobs.stop()), step('the sync worker', sync.worker.stop())]);
      // An import on an ETL thread does not look at its job's signal: ending the threads ends it
      // (its checkpoint keeps what it stored, the next attempt goes on from there).
      await step('the ETL threads', etl.close());
      await stopped;
      // A job that was still running (a sync pull handing its payload to the ETL) may have started a
      // thread after that close: the pool starts threads for later jobs. None runs now, so this
      // close ends whatever such a job started, before the stores close (a clean-clone run met one
      // that re-created events.sqlite and sealing.key in a test's removed data directory).
      await step('the ETL threads started meanwhile', etl.close());
      await step('the reactors', reactors.stop());
      await step('the work queue', queue.close());
      await step('the projectors', projectors.stop());
      await step('the event store', stores.eventStore.close());
      await step('the read store', readStore.close());
      await step('the raw store', rawStore.close());
    },
  };
}

/** How long one part of the service may take to stop before the close names it in the log. */
const CLOSE_STEP_WARN_MS = 10_000;

async function awaitNamed<T>(stopping: Promise<T>, what: string, log: Logger): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => log.warn({ waitingMs: Date.now() - started }, `closing: still waiting for ${what} to stop`), CLOSE_STEP_WARN_MS);
  timer.unref();
  try {
    return await stopping;
  } finally {
    clearInterval(timer);
  }
}
