import type { FastifyInstance } from 'fastify';
import type { AppContext } from './appContext.js';
import { problems } from './problems.js';
import { OPEN_JOBS } from '../../projections/ingestion/etlJobsProjection.js';

/** ETL jobs waiting or running: what an accepted upload adds to (the instance's count, on the index led by the status). */
const OPEN = { $in: ['pending', 'running'] };
/** The instance's and a tenant's counts are read again after this long. */
const COUNT_TTL_MS = 250;
/** Tenants whose counts are kept at once; past it the oldest are read again (the map's memory is bounded). */
const MAX_KEPT_TENANTS = 10_000;

export type EtlBacklogLimits = { maxOpenJobs: number; maxOpenJobsPerUser: number; maxOpenJobsPerTenant: number };

/**
 * Back-pressure on uploads (issue 27; docs/decisions.md "Upload back-pressure"): an upload is
 * answered 429 with Retry-After, before its body is read, when the ETL queue already holds
 * `maxOpenJobs` open jobs, its tenant `maxOpenJobsPerTenant` (contracts §18: one tenant's many
 * users do not fill it for the other tenants either) or its user `maxOpenJobsPerUser`. Accepted
 * uploads are durable and their jobs live on disk, so the queue never costs memory; what the
 * limits bound is how far behind processing may fall, and they keep one user's or one tenant's
 * flood of uploads from filling it for everyone.
 *
 * The instance's and each tenant's counts are read at most once per COUNT_TTL_MS and shared by the
 * uploads meanwhile, each upload let through adding one to the kept count (issue 37: reading a
 * busy tenant's open jobs on every upload cost the HTTP thread more than the rest of the check).
 * Between two reads a limit is passed by at most the uploads let through at the same moment, which
 * the in-flight slots bound. The user's count reads at most `maxOpenJobsPerUser` index entries.
 */
export function addEtlBackPressure(app: FastifyInstance, ctx: Pick<AppContext, 'readStore'>, limits: EtlBacklogLimits): void {
  const instance = keptCount(() => ctx.readStore.count('etl_jobs', { status: OPEN }));
  const tenants = new Map<string, KeptCount>();
  const tenantCount = (tenantId: string): KeptCount => {
    let kept = tenants.get(tenantId);
    if (!kept) {
      if (tenants.size >= MAX_KEPT_TENANTS) tenants.delete(tenants.keys().next().value!);
      // Counted by the store (an index of tenant and status), not read as rows: a busy tenant's
      // thousands of open jobs cost the HTTP thread milliseconds as rows (issue 37).
      kept = keptCount(() => ctx.readStore.count('etl_jobs', { tenant_id: tenantId, ...OPEN_JOBS }));
      tenants.set(tenantId, kept);
    }
    return kept;
  };
  app.addHook('preParsing', async (request, _reply, payload) => {
    const principal = request.principal;
    if (principal?.kind !== 'user') return payload;
    if ((await instance.read()) >= limits.maxOpenJobs) {
      throw problems.tooManyRequests(`the processing queue holds ${limits.maxOpenJobs} uploads or more; retry later`, 5);
    }
    const tenant = tenantCount(principal.tenantId);
    if ((await tenant.read()) >= limits.maxOpenJobsPerTenant) {
      throw problems.tooManyRequests(`this tenant has ${limits.maxOpenJobsPerTenant} uploads waiting to be processed; retry once some are done`, 2);
    }
    const own = await ctx.readStore.find('etl_jobs', { filter: { user_id: principal.userId, ...OPEN_JOBS }, limit: limits.maxOpenJobsPerUser, fields: ['_id'] });
    if (own.length >= limits.maxOpenJobsPerUser) {
      throw problems.tooManyRequests(`this user has ${limits.maxOpenJobsPerUser} uploads waiting to be processed; retry once some are done`, 2);
    }
    instance.admitted();
    tenant.admitted();
    return payload;
  });
}

type KeptCount = { read: () => Promise<number>; admitted: () => void };

/** A count read at most once per COUNT_TTL_MS (concurrent callers share one read), plus the uploads let through since. */
function keptCount(count: () => Promise<number>): KeptCount {
  let kept: { at: number; count: Promise<number>; since: number } | null = null;
  return {
    read: async () => {
      const now = Date.now();
      if (!kept || now - kept.at > COUNT_TTL_MS) {
        const read = count();
        const entry = { at: now, count: read, since: 0 };
        // A failed count is not kept: the next upload asks again.
        read.catch(() => {
          if (kept === entry) kept = null;
        });
        kept = entry;
      }
      const entry = kept;
      return (await entry.count) + entry.since;
    },
    admitted: () => {
      if (kept) kept.since++;
    },
  };
}
