import { hostname } from 'node:os';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import type { ProviderSettings } from './catalog/providerFacts.js';
import { PROVIDER_KINDS } from './catalog/providerKinds.js';
import { DEXCOM_ENVIRONMENTS, DEXCOM_SANDBOX_ORIGIN } from './catalog/providers.js';

const bool = z
  .enum(['true', 'false', '1', '0'])
  .optional()
  .transform((v) => v === 'true' || v === '1');

/**
 * The projector thread's page cache on readmodels.sqlite. It was 48 MiB, sized for the samples'
 * record-key index, which outgrows it at a million samples anyway; at 16 the ingest's and the
 * import's peaks were 23-28 MiB lower and their CPU per record no higher (BENCHMARKS.md, "Issue 38: memory").
 */
const PROJECTOR_CACHE_MIB_DEFAULT = 16;

/**
 * The projector thread's old-generation cap, MB. V8 also reads it as the machine's size: the heap
 * grows by at most 1.3 times the live data before it is marked again up to 256 MB, 1.6 at 1,024,
 * up to 4 from 2,048. At 1,024 the projector marked its heap half as often in a 300k ingest and
 * V8's threads spent 16-28 % less CPU, but the peak resident memory rose (by up to 35 MiB in
 * 300k ingests, 59 in a 1M one); the default keeps the memory (docs/memory.md, "The threads' heaps").
 */
const PROJECTOR_HEAP_MB_DEFAULT = 160;

/** Every setting the service reads from its environment, in one place (README "Configuration" mirrors it). */
const EnvSchema = z.object({
  DATA_DIR: z.string().min(1).default('./data'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  EVENTSTORE_URL: z.string().optional(),
  MONGODB_URL: z.string().optional(),
  MONGODB_DATABASE: z.string().min(1).default('wellstream'),
  ADMIN_API_KEY: z
    .string()
    .regex(/^svc_ak_[0-9A-Za-z]{43}$/, 'ADMIN_API_KEY must be svc_ak_ followed by 43 base62 characters')
    .optional(),
  SEALING_KEY: z.string().optional(),
  SEALING_KEY_PREVIOUS: z.string().optional(),
  PUBLIC_BASE_URL: z.string().url().optional(),
  TRUST_PROXY: z.string().optional(),
  CORS_ORIGINS: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool,
  WEBHOOK_RETRY_SCHEDULE: z.string().optional(),
  WEBHOOK_DELIVERY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  PROJECTION_RETRY_SCHEDULE: z.string().optional(),
  UPLOADS_IN_FLIGHT: z.coerce.number().int().min(1).default(8),
  UPLOADS_IN_FLIGHT_PER_TENANT: z.coerce.number().int().min(1).optional(),
  UPLOAD_BODY_DEADLINE_S: z.coerce.number().positive().max(86_400).default(900),
  BODY_IDLE_TIMEOUT_S: z.coerce.number().positive().max(3600).default(30),
  ETL_MAX_OPEN_JOBS: z.coerce.number().int().min(1).default(10_000),
  ETL_MAX_OPEN_JOBS_PER_USER: z.coerce.number().int().min(1).max(10_000).default(100),
  ETL_MAX_OPEN_JOBS_PER_TENANT: z.coerce.number().int().min(1).max(10_000).default(1_000),
  ETL_BULK_PROJECTOR_LEAD: z.coerce.number().int().min(0).max(10_000).default(1),
  IMPORT_MAX_BYTES: z.coerce.number().int().min(1).default(20 * 1024 ** 3),
  IMPORT_UPLOAD_EXPIRY_HOURS: z.coerce.number().int().min(1).max(24 * 90).default(24 * 7),
  TUS_OPEN_PER_USER: z.coerce.number().int().min(1).max(10_000).default(5),
  TUS_STAGED_BYTES_PER_TENANT: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(50 * 1024 ** 3),
  DISK_FREE_FLOOR_BYTES: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(2 * 1024 ** 3),
  ARCHIVES_IN_FLIGHT: z.coerce.number().int().min(1).max(256).default(4),
  ARCHIVES_IN_FLIGHT_PER_TENANT: z.coerce.number().int().min(1).max(256).optional(),
  ETL_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  ETL_BULK_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  ETL_DEADLINE_S: z.coerce.number().int().min(1).max(86_400).default(120),
  ETL_BULK_SECONDS_PER_MIB: z.coerce.number().int().min(1).max(3600).default(30),
  ETL_BULK_DEADLINE_MAX_S: z.coerce.number().int().min(1).max(7 * 86_400).default(7200),
  ETL_MEMORY_MB: z.coerce.number().int().min(64).max(65_536).default(256),
  DELETION_JOB_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  SYNC_INTERVAL_MINUTES: z.coerce.number().int().min(1).max(10_080).default(60),
  SYNC_BACKFILL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  SYNC_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(5),
  LEASE_MS: z.coerce.number().int().min(1000).max(600_000).default(10_000),
  LEASE_RENEW_MS: z.coerce.number().int().min(100).max(300_000).default(3_000),
  INSTANCE_ID: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/, 'INSTANCE_ID must be 1 to 64 letters, digits or . _ : -')
    .optional(),
  PROJECTOR_THREAD: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1'),
  PROJECTOR_CACHE_MIB: z.coerce.number().int().min(1).max(65_536).default(PROJECTOR_CACHE_MIB_DEFAULT),
  PROJECTOR_HEAP_MB: z.coerce.number().int().min(64).max(65_536).default(PROJECTOR_HEAP_MB_DEFAULT),
});

export type Config = {
  dataDir: string;
  port: number;
  host: string;
  backend: { kind: 'embedded' } | { kind: 'production'; eventstoreUrl: string; mongodbUrl: string; mongodbDatabase: string };
  adminApiKey?: string;
  sealingKey?: Buffer;
  /** Sealing keys being rotated out: they still open data keys sealed before the rotation (docs/erasure.md). */
  previousSealingKeys: Buffer[];
  publicBaseUrl: string;
  /** PUBLIC_BASE_URL was set: links and origin checks use it, not the address a request names. */
  publicBaseUrlConfigured: boolean;
  /** Which peers' X-Forwarded-For/-Proto/-Host are believed (fastify `trustProxy`): none, all, a hop count, or addresses and ranges. */
  trustProxy: boolean | number | string;
  /** contracts §17: the origins whose web apps may call the user-token and tus routes (src/server/cors.ts); empty: none. */
  corsOrigins: string[];
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  webhookAllowPrivateTargets: boolean;
  webhookRetryScheduleSeconds?: number[];
  /** Webhook deliveries are purged this many days after they were made (docs/webhooks.md). */
  webhookDeliveryRetentionDays: number;
  /**
   * Uploads (POST /v1/ingest) processed at once by this process, and by one tenant among them
   * (contracts §18; default half the instance's, rounded up, never more than it).
   */
  uploadsInFlight: number;
  uploadsInFlightPerTenant: number;
  /** The longest an upload's whole body may take to arrive (408 past it): a trickle is never idle. */
  uploadBodyDeadlineMs: number;
  /** A request body of which no byte arrived this long is 408, and a response its reader stopped taking this long is closed (contracts §18). */
  bodyIdleTimeoutMs: number;
  /** Uploads are answered 429 while the ETL queue holds this many open jobs, or their tenant or user this many (src/server/etlBackPressure.ts). */
  etlBacklog: { maxOpenJobs: number; maxOpenJobsPerUser: number; maxOpenJobsPerTenant: number };
  /**
   * A bulk ETL job waits before an append while the record projections are more than this many
   * of its appends behind (src/processes/etl/projectorPacing.ts, docs/fair-sharing.md); 0: never.
   */
  etlBulkProjectorLead: number;
  /** contracts §13: the largest resumable upload (413 at creation above it). */
  importMaxBytes: number;
  /** How long an unfinished resumable upload is kept after its last byte arrived (tus expiration). */
  importUploadExpiryHours: number;
  /**
   * contracts §18, resumable uploads: incomplete uploads per user (429 over it), declared bytes of
   * a tenant's incomplete uploads (413), and the free space under DATA_DIR below which no upload
   * is created (507) (docs/formats/uploads.md "Quotas").
   */
  tusQuotas: { openPerUser: number; stagedBytesPerTenant: number; diskFreeFloorBytes: number };
  /** `GET /v1/me/archive` streams at once per process (one per user among them), and per tenant (default half the instance's, rounded up). */
  archivesInFlight: number;
  archivesInFlightPerTenant: number;
  etlConcurrency: number;
  /** Bulk jobs (uploads of BULK_UPLOAD_BYTES or more) run at once per process, each in a worker thread of its own. */
  etlBulkConcurrency: number;
  /**
   * What one ETL attempt may take before its worker is terminated and its upload failed
   * (contracts §18, docs/etl-isolation.md): wall-clock time of a small job; of a bulk job the same
   * plus `bulkMsPerMiB` per MiB uploaded, up to `bulkDeadlineMaxMs`; old-generation heap of each thread.
   */
  etlLimits: { deadlineMs: number; bulkMsPerMiB: number; bulkDeadlineMaxMs: number; memoryMb: number };
  /** Record projections run on a thread of their own (default), or on the main thread. */
  projectorThread: boolean;
  /** SQLite's page cache of the projector thread's connection to the read models, MiB (docs/memory.md). */
  projectorCacheMiB: number;
  /** The projector thread's old-generation cap, MB (docs/memory.md, "The threads' heaps"). */
  projectorHeapMb: number;
  /** Pauses before each retry of a projection batch its own code failed; one failure more dead-letters it, an erasure event excepted (a failing store is retried with back-off instead: docs/architecture.md "Dead letters"). */
  projectionRetryDelaysMs?: number[];
  /** A deletion job's attempt not done after this long is failed with the reason (docs/erasure.md). */
  deletionJobTimeoutMs: number;
  /** Provider pulls (src/processes/sync, docs/connections.md "Sync runs"): schedule, first backfill, attempts. */
  sync: { intervalMs: number; backfillDays: number; maxAttempts: number };
  /**
   * Leases of background work shared by several service processes (docs/architecture.md):
   * `instanceId` names this process in them (with a per-start suffix added by each holder).
   */
  leases: { leaseMs: number; renewMs: number; instanceId: string };
  /**
   * Per oauth or push provider: the instance's own client keys (`<SLUG>_CLIENT_ID`,
   * `<SLUG>_CLIENT_SECRET`, used when a tenant has none) and `<SLUG>_BASE_URL`, which replaces the
   * origin of every address of the provider (contracts §7).
   */
  providers: Record<string, ProviderSettings>;
};

function providerSettings(env: NodeJS.ProcessEnv): Record<string, ProviderSettings> {
  const out: Record<string, ProviderSettings> = {};
  for (const [slug, kind] of Object.entries(PROVIDER_KINDS)) {
    if (kind === 'device' || kind === 'import') continue;
    const prefix = slug.toUpperCase().replace(/[^A-Z0-9]/g, '_');
    let baseUrl = env[`${prefix}_BASE_URL`] || undefined;
    if (baseUrl !== undefined && !/^https?:\/\/[^/]+\/?$/.test(baseUrl)) throw new ConfigError(`${prefix}_BASE_URL must be a scheme, host and optional port (http://127.0.0.1:9000)`);
    const inboundSecret = kind === 'push' ? env[`${prefix}_INBOUND_SECRET`] || undefined : undefined;
    if (inboundSecret !== undefined && !/^[A-Za-z0-9._~-]{24,256}$/.test(inboundSecret)) throw new ConfigError(`${prefix}_INBOUND_SECRET must be 24 to 256 letters, digits or . _ ~ -`);
    const dexcomEnvironment = slug === 'dexcom' ? (env.DEXCOM_ENVIRONMENT || 'production') : undefined;
    if (dexcomEnvironment !== undefined && !(DEXCOM_ENVIRONMENTS as readonly string[]).includes(dexcomEnvironment)) throw new ConfigError(`DEXCOM_ENVIRONMENT must be one of ${DEXCOM_ENVIRONMENTS.join(', ')}`);
    // Dexcom's sandbox is its own origin: the environment picks it unless DEXCOM_BASE_URL names another.
    if (dexcomEnvironment === 'sandbox' && baseUrl === undefined) baseUrl = DEXCOM_SANDBOX_ORIGIN;
    const subscriberVerificationCode = slug === 'fitbit' ? env[`${prefix}_SUBSCRIBER_VERIFICATION_CODE`] || undefined : undefined;
    out[slug] = { clientId: env[`${prefix}_CLIENT_ID`] || undefined, clientSecret: env[`${prefix}_CLIENT_SECRET`] || undefined, baseUrl, ...(inboundSecret ? { inboundSecret } : {}), ...(subscriberVerificationCode ? { subscriberVerificationCode } : {}) };
  }
  return out;
}

const PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** CORS_ORIGINS (contracts §17): comma-separated origins, each exactly as a browser sends it; unset or empty, none. */
function corsOriginsSetting(value: string | undefined): string[] {
  const entries = (value ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '');
  // A browser sends its Origin exactly as scheme://host[:port]; an entry written otherwise would never match.
  const bad = entries.find((x) => {
    try {
      const url = new URL(x);
      return (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== x;
    } catch {
      return true;
    }
  });
  if (bad !== undefined) throw new ConfigError(`CORS_ORIGINS must be comma-separated origins, each scheme://host[:port] without a path or trailing slash, e.g. https://app.example.org (not "${bad}")`);
  return [...new Set(entries)];
}

/**
 * TRUST_PROXY: unset or `false` trusts no proxy; `true` every peer (only when nothing but the
 * proxy can reach the service); a number the hops in front; else a comma list of addresses,
 * CIDR ranges or `loopback`, `linklocal`, `uniquelocal` (what fastify's trustProxy accepts).
 */
function trustProxySetting(value: string | undefined): boolean | number | string {
  const v = (value ?? '').trim();
  if (v === '' || v === 'false' || v === '0') return false;
  if (v === 'true') return true;
  if (/^[1-9][0-9]?$/.test(v)) return Number(v);
  const entries = v.split(',').map((x) => x.trim());
  const address = (x: string) => ipaddr.IPv4.isValidFourPartDecimal(x) || ipaddr.IPv6.isValid(x);
  const valid = (x: string) => {
    if (PROXY_RANGES.has(x)) return true;
    const [ip = '', bits, ...rest] = x.split('/');
    if (rest.length || !address(ip)) return false;
    return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (ipaddr.IPv6.isValid(ip) ? 128 : 32));
  };
  const bad = entries.find((x) => !valid(x));
  if (bad !== undefined) throw new ConfigError(`TRUST_PROXY must be true, false, a hop count or a comma list of addresses, CIDR ranges, loopback, linklocal or uniquelocal (not "${bad}")`);
  return entries.join(',');
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * A tenant's share of a per-instance cap (contracts §18): as set, else half the instance's
 * rounded up, so that one tenant leaves the other half to the rest; never more than the instance's.
 */
function tenantShare(perTenant: number | undefined, instance: number): number {
  return Math.min(perTenant ?? Math.ceil(instance / 2), instance);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  const e = parsed.data;
  const hasEs = !!e.EVENTSTORE_URL;
  const hasMongo = !!e.MONGODB_URL;
  if (hasEs !== hasMongo) {
    throw new ConfigError(`${hasEs ? 'MONGODB_URL' : 'EVENTSTORE_URL'} is missing: production backends need both EVENTSTORE_URL and MONGODB_URL`);
  }
  let sealingKey: Buffer | undefined;
  if (e.SEALING_KEY) {
    sealingKey = Buffer.from(e.SEALING_KEY, 'base64');
    if (sealingKey.length !== 32) throw new ConfigError('SEALING_KEY must be 32 bytes, base64-encoded');
  } else if (hasEs) {
    throw new ConfigError('SEALING_KEY is missing: production backends need an explicit sealing key');
  }
  const previousSealingKeys = (e.SEALING_KEY_PREVIOUS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k.length > 0)
    .map((k) => Buffer.from(k, 'base64'));
  if (previousSealingKeys.some((k) => k.length !== 32)) throw new ConfigError('SEALING_KEY_PREVIOUS must be comma-separated 32-byte keys, base64-encoded');
  if (e.LEASE_RENEW_MS * 2 > e.LEASE_MS) throw new ConfigError('LEASE_RENEW_MS must be at most half of LEASE_MS, so that a lease is renewed before it runs out');
  let schedule: number[] | undefined;
  if (e.WEBHOOK_RETRY_SCHEDULE) {
    schedule = e.WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => Number(s.trim()));
    if (schedule.length !== 8 || schedule.some((n) => !Number.isFinite(n) || n < 0)) {
      throw new ConfigError('WEBHOOK_RETRY_SCHEDULE must be 8 comma-separated non-negative numbers of seconds');
    }
  }
  let projectionRetry: number[] | undefined;
  if (e.PROJECTION_RETRY_SCHEDULE) {
    projectionRetry = e.PROJECTION_RETRY_SCHEDULE.split(',').map((s) => Number(s.trim()) * 1000);
    if (projectionRetry.length < 1 || projectionRetry.length > 10 || projectionRetry.some((n) => !Number.isFinite(n) || n < 0 || n > 3_600_000)) {
      throw new ConfigError('PROJECTION_RETRY_SCHEDULE must be 1 to 10 comma-separated numbers of seconds between 0 and 3600');
    }
  }
  return {
    dataDir: e.DATA_DIR,
    port: e.PORT,
    host: e.HOST,
    backend: hasEs
      ? { kind: 'production', eventstoreUrl: e.EVENTSTORE_URL!, mongodbUrl: e.MONGODB_URL!, mongodbDatabase: e.MONGODB_DATABASE }
      : { kind: 'embedded' },
    adminApiKey: e.ADMIN_API_KEY,
    sealingKey,
    previousSealingKeys,
    publicBaseUrl: (e.PUBLIC_BASE_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/$/, ''),
    publicBaseUrlConfigured: e.PUBLIC_BASE_URL !== undefined,
    trustProxy: trustProxySetting(e.TRUST_PROXY),
    corsOrigins: corsOriginsSetting(e.CORS_ORIGINS),
    logLevel: e.LOG_LEVEL,
    webhookAllowPrivateTargets: e.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    webhookRetryScheduleSeconds: schedule,
    webhookDeliveryRetentionDays: e.WEBHOOK_DELIVERY_RETENTION_DAYS,
    uploadsInFlight: e.UPLOADS_IN_FLIGHT,
    uploadsInFlightPerTenant: tenantShare(e.UPLOADS_IN_FLIGHT_PER_TENANT, e.UPLOADS_IN_FLIGHT),
    uploadBodyDeadlineMs: e.UPLOAD_BODY_DEADLINE_S * 1000,
    bodyIdleTimeoutMs: e.BODY_IDLE_TIMEOUT_S * 1000,
    etlBacklog: { maxOpenJobs: e.ETL_MAX_OPEN_JOBS, maxOpenJobsPerUser: e.ETL_MAX_OPEN_JOBS_PER_USER, maxOpenJobsPerTenant: e.ETL_MAX_OPEN_JOBS_PER_TENANT },
    etlBulkProjectorLead: e.ETL_BULK_PROJECTOR_LEAD,
    importMaxBytes: e.IMPORT_MAX_BYTES,
    importUploadExpiryHours: e.IMPORT_UPLOAD_EXPIRY_HOURS,
    tusQuotas: { openPerUser: e.TUS_OPEN_PER_USER, stagedBytesPerTenant: e.TUS_STAGED_BYTES_PER_TENANT, diskFreeFloorBytes: e.DISK_FREE_FLOOR_BYTES },
    archivesInFlight: e.ARCHIVES_IN_FLIGHT,
    archivesInFlightPerTenant: tenantShare(e.ARCHIVES_IN_FLIGHT_PER_TENANT, e.ARCHIVES_IN_FLIGHT),
    etlConcurrency: e.ETL_CONCURRENCY,
    etlBulkConcurrency: e.ETL_BULK_CONCURRENCY,
    etlLimits: {
      deadlineMs: e.ETL_DEADLINE_S * 1000,
      bulkMsPerMiB: e.ETL_BULK_SECONDS_PER_MIB * 1000,
      bulkDeadlineMaxMs: Math.max(e.ETL_BULK_DEADLINE_MAX_S, e.ETL_DEADLINE_S) * 1000,
      memoryMb: e.ETL_MEMORY_MB,
    },
    projectorThread: e.PROJECTOR_THREAD,
    projectorCacheMiB: e.PROJECTOR_CACHE_MIB,
    projectorHeapMb: e.PROJECTOR_HEAP_MB,
    projectionRetryDelaysMs: projectionRetry,
    deletionJobTimeoutMs: e.DELETION_JOB_TIMEOUT_SECONDS * 1000,
    sync: { intervalMs: e.SYNC_INTERVAL_MINUTES * 60_000, backfillDays: e.SYNC_BACKFILL_DAYS, maxAttempts: e.SYNC_MAX_ATTEMPTS },
    leases: { leaseMs: e.LEASE_MS, renewMs: e.LEASE_RENEW_MS, instanceId: e.INSTANCE_ID ?? `${hostname()}-${process.pid}` },
    providers: providerSettings(env),
  };
}
