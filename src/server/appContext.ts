import type { Logger } from 'pino';
import type { ProviderGrants } from '../../commands/connections/providerGrants.js';
import type { ErasureHook } from '../../commands/deletions/erasureSteps.js';
import type { Config } from '../config.js';
import type { DataKeys } from '../crypto/dataKeys.js';
import type { ConnectionCredentials } from '../../commands/connections/connectionCredentials.js';
import type { ValueSealer } from '../crypto/sealedValue.js';
import type { EventStore } from '../eventstore/eventStore.js';
import type { JobRunner } from '../processes/jobs/jobRunner.js';
import type { SyncWorker } from '../processes/sync/syncWorker.js';
import type { WebhookEngine } from '../processes/webhooks/webhookEngine.js';
import type { ProjectorRuntime } from '../projector/projectorRuntime.js';
import type { ReactorRuntime } from '../projector/reactor.js';
import type { RawStore } from '../rawstore/rawStore.js';
import type { ReadStore } from '../readstore/readStore.js';
import type { RuntimeMonitor } from '../shared/runtimeStats.js';
import type { WebhookSecrets } from '../webhooks/secretSealing.js';
import type { WebhookApplications } from './webhookApplications.js';

/**
 * What the service's surfaces (REST routes, MCP, the demo user) are handed: the stores, the
 * background work they kick or wait on, and the sealers. src/app/context.ts builds it from the
 * configuration; the surfaces declare it here, so nothing below the wiring imports the wiring.
 */
export type AppContext = {
  config: Config;
  log: Logger;
  eventStore: EventStore;
  readStore: ReadStore;
  rawStore: RawStore;
  /** Background jobs of this process (src/processes/jobs): the work queue and the runner that claims from it. */
  jobs: JobRunner;
  /** Looks for ETL work now (the job runner). */
  etl: { kick(): void };
  /** Provider pulls (src/processes/sync): runs queued, claimed on leases and carried out. */
  sync: SyncWorker;
  projectors: ProjectorRuntime;
  reactors: ReactorRuntime;
  /** User deletions and provider erasures (docs/erasure.md). */
  deletions: { kick(): void };
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
  /** The connections' OAuth tokens as refreshed (commands/connections/connectionCredentials.ts). */
  credentials: ConnectionCredentials;
  /** The providers' OAuth endpoints, as the consent commands call them (commands/connections/providerGrants.ts). */
  grants: ProviderGrants;
  /** Each provider's applications opened once for its webhooks, kept until provider keys change. */
  webhookApplications: WebhookApplications;
  runtime: RuntimeMonitor;
  /** Webhook delivery (src/processes/webhooks): runs with the background work of the service. */
  webhooks: WebhookEngine;
  /** Seals and opens endpoints' signing secrets under SEALING_KEY (and SEALING_KEY_PREVIOUS during a rotation). */
  webhookSecrets: WebhookSecrets;
  /**
   * Waits until the named read models (default: all) reflect everything up to `position`
   * (default: the head): read-your-writes for the answering process (docs/read-your-writes.md).
   */
  settle: (position?: number, projections?: readonly string[]) => Promise<void>;
  /**
   * The log position up to which every record view has applied everything (contracts §17: an
   * upload is `done` once its records read back in all of them; src/projector/appliedThrough.ts).
   */
  recordsApplied: () => Promise<number>;
  close: () => Promise<void>;
};
