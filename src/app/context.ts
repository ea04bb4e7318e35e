import type { Logger } from 'pino';
import { projections, recordProjections } from '../../projections/index.js';
import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/eventStore.js';
import type { ErasureHook } from '../../commands/deletions/erasureSteps.js';
import { connectionErasureHook } from '../../commands/connections/connectionErasure.js';
import type { DataKeys } from '../crypto/dataKeys.js';
import { dataKeysOf } from '../crypto/dataKeysOf.js';
import { OpeningEventStore } from '../crypto/openingEventStore.js';
import { PersonalSealer } from '../crypto/personalSealing.js';
import { EventOpener } from '../crypto/recordSealing.js';
import { PERSONAL_FIELDS } from '../../commands/shared/personalFields.js';
import { DeletionJobRunner } from '../processes/deletions/deletionJobRunner.js';
import { ProjectorRuntime } from '../projector/projectorRuntime.js';
import { ReactorRuntime } from '../projector/reactor.js';
import { userSubscriptionsReactor } from '../processes/sync/userSubscriptions.js';
import type { ReadStore } from '../readstore/readStore.js';
import type { RawStore } from '../rawstore/rawStore.js';
import { EtlWorker } from '../processes/etl/etlWorker.js';
import { EtlThreadPool } from '../processes/etl/etlPool.js';
import { etlParsers } from '../processes/etl/etlParsers.js';
import { sha256Hex } from '../shared/secrets.js';
import { resolveAdminKey, resolveSealingKey } from './dataDir.js';
import { createLogger } from './logger.js';
import { RuntimeMonitor } from './runtimeStats.js';
import { WebhookEngine } from '../processes/webhooks/webhookEngine.js';
import { deliveryErasure } from '../webhooks/deliveryErasure.js';
import { WEBHOOK_SECRET_SEALING, WebhookSecrets } from '../webhooks/secretSealing.js';
import { sealingKeyringOf } from '../crypto/sealingKeyringOf.js';
import { ValueSealer } from '../crypto/sealedValue.js';
import { openStores } from './stores.js';
import { leaseSettingsOf } from './leaseSettings.js';
import { createSync, type SyncOptions } from '../processes/sync/syncWiring.js';
import { WebhookApplications } from '../server/webhookApplications.js';
import { indexInboundSecrets } from '../processes/inboundSecretIndex.js';
import { providerKeysProjection } from '../../projections/connections/providerKeysProjection.js';
import type { SyncWorker } from '../processes/sync/syncWorker.js';

export type AppContext = {
  config: Config;
  log: Logger;
  eventStore: EventStore;
  readStore: ReadStore;
  rawStore: RawStore;
  etl: EtlWorker;
  /** Provider pulls (src/processes/sync): runs queued, claimed on leases and carried out. */
  sync: SyncWorker;
  projectors: ProjectorRuntime;
  reactors: ReactorRuntime;
  /** User deletions and provider erasures (docs/erasure.md). */
  deletions: DeletionJobRunner;
  /** What other capabilities erase with a user or a provider's data (commands/deletions/erasureSteps.ts). */
  erasureHooks: ErasureHook[];
  /** Per user and provider data keys that seal health payloads (docs/erasure.md). */
  dataKeys: DataKeys;
  adminKeyHash: string;
  /** Set when this start generated the admin key; main prints it once. */
  generatedAdminKey: string | null;
  /** Keys cursor MACs (src/shared/cursor.ts); sealing goes through the keyrings below, never this directly. */
  sealingKey: Buffer;
  /** Seals and opens provider keys, OAuth tokens and PKCE verifiers (src/crypto/sealedValue.ts). */
  valueSealer: ValueSealer;
  /** Each provider's applications opened once for its webhooks, kept until provider keys change. */
  webhookApplications: WebhookApplications;
  runtime: RuntimeMonitor;
  /** Webhook delivery (src/webhooks): runs with the background work of the service. */
  webhooks: WebhookEngine;
  /** Seals and opens endpoints' signing secrets under SEALING_KEY (and SEALING_KEY_PREVIOUS during a rotation). */
  webhookSecrets: WebhookSecrets;
  /**
   * Waits until the named read models (default: all) reflect everything up to `position`
   * (default: the head): read-your-writes for the answering process (docs/read-your-writes.md).
   */
  settle: (position?: number, projections?: readonly string[]) => Promise<void>;
  close: () => Promise<void>;
};

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
};

/** Wires stores, projections and process managers from the configuration. */
export async function createContext(config: Config, options: ContextOptions = {}): Promise<AppContext> {
  const log = options.log ?? createLogger(config.logLevel);
  const stores = await openStores(config);
  const { readStore, rawStore } = stores;
  const admin = resolveAdminKey(config.dataDir, config.adminApiKey);
  const sealingKey = resolveSealingKey(config.dataDir, config.sealingKey);
  const mode = options.runBackground === undefined || options.runBackground === true ? 'all' : options.runBackground === false ? 'none' : options.runBackground;
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
  const valueSealer = ValueSealer.fromConfig(config);
  const webhookApplications = new WebhookApplications({ readStore, sealer: valueSealer, providers: config.providers });
  const sync = createSync(
    {
      config,
      eventStore,
      readStore,
      rawStore,
      dataKeys,
      sealer: valueSealer,
      settle: (position, names) => projectors.waitForIdle(position, undefined, names),
      kickEtl: () => etl.kick(),
      log,
    },
    options,
  );
  const subscriptions = userSubscriptionsReactor({ eventStore, readStore, sealer: valueSealer, providers: config.providers, publicBaseUrl: config.publicBaseUrl, now: () => sync.worker.now(), log });
  const reactors = new ReactorRuntime(eventStore, readStore, [sync.reactor, subscriptions], log, leases('reactors'));
  const erasureHooks: ErasureHook[] = [connectionErasureHook({ eventStore, readStore, sealer: valueSealer, providers: config.providers }), sync.erasureHook];
  const webhookSecrets = new WebhookSecrets(sealingKeyringOf(config, WEBHOOK_SECRET_SEALING));
  const webhooks = new WebhookEngine({
    eventStore,
    readStore,
    secrets: webhookSecrets,
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    scheduleSeconds: config.webhookRetryScheduleSeconds,
    retentionDays: config.webhookDeliveryRetentionDays,
    now: options.webhookClock,
    log,
    leases: leases('webhooks'),
  });
  const deletions = new DeletionJobRunner({
    eventStore,
    readStore,
    rawStore,
    dataKeys,
    hooks: erasureHooks,
    deliveries: deliveryErasure({ readStore, settle: (position, timeoutMs) => webhooks.settle(position, timeoutMs), log }),
    settle: (position, timeoutMs) => projectors.waitForIdle(position, timeoutMs),
    timeoutMs: config.deletionJobTimeoutMs,
    takeOverRunningAtStart: config.backend.kind === 'embedded',
    log,
    leases: leases('deletions'),
  });
  const etl = new EtlWorker({
    eventStore,
    readStore,
    rawStore,
    parsers: etlParsers,
    dataKeys,
    log,
    concurrency: config.etlConcurrency,
    takeOverRunningAtStart: config.backend.kind === 'embedded',
    leases: leases('etl'),
    // ETL pool (src/processes/etl/etlPool.ts): jobs normalised on worker threads with their own store connections.
    pool: new EtlThreadPool(config),
  });
  const runBackground = mode !== 'none';
  const runtime = new RuntimeMonitor();
  if (mode === 'all' || mode === 'projections') await projectors.start();
  if (mode === 'all') {
    // Keys set before their inbound secret was indexed get it (once; in the background: it waits for the read model).
    void indexInboundSecrets({ eventStore, readStore, sealer: valueSealer, settle: () => projectors.waitForIdle(undefined, 120_000, [providerKeysProjection.name]), log }).catch((err: unknown) =>
      log.warn({ err }, 'indexing inbound secrets of provider keys failed; it is tried again at the next start'),
    );
    await reactors.start();
    // Before the deletion runner: a job it resumes waits for the engine to read its announcement.
    await webhooks.start();
    deletions.start();
    etl.start();
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
    etl,
    sync: sync.worker,
    projectors,
    reactors,
    deletions,
    erasureHooks,
    dataKeys,
    adminKeyHash: sha256Hex(admin.key),
    generatedAdminKey: admin.generated ? admin.key : null,
    sealingKey,
    valueSealer,
    webhookApplications,
    runtime,
    webhooks,
    webhookSecrets,
    settle: async (position, names) => {
      if (runBackground) await projectors.waitForIdle(position, undefined, names);
    },
    close: async () => {
      runtime.close();
      await webhooks.stop();
      await deletions.stop();
      await sync.worker.stop();
      await etl.stop();
      await reactors.stop();
      await projectors.stop();
      await stores.eventStore.close();
      await readStore.close();
      await rawStore.close();
    },
  };
}
