import type { FastifyInstance } from 'fastify';
import type { ReadStore } from '../readstore/readStore.js';
import type { AppContext } from './appContext.js';
import { problems } from './problems.js';

/** ETL jobs waiting or running: what an accepted upload adds to. */
const OPEN = { $in: ['pending', 'running'] };
/** The instance-wide count is read again after this long (one index range count). */
const COUNT_TTL_MS = 250;

export type EtlBacklogLimits = { maxOpenJobs: number; maxOpenJobsPerUser: number; maxOpenJobsPerTenant: number };

/**
 * Back-pressure on uploads (issue 27; docs/decisions.md "Upload back-pressure"): an upload is
 * answered 429 with Retry-After, before its body is read, when the ETL queue already holds
 * `maxOpenJobs` open jobs, its tenant `maxOpenJobsPerTenant` (contracts §18: one tenant's many
 * users do not fill it for the other tenants either) or its user `maxOpenJobsPerUser`. Accepted
 * uploads are durable and their jobs live on disk, so the queue never costs memory; what the
 * limits bound is how far behind processing may fall, and they keep one user's or one tenant's
 * flood of uploads from filling it for everyone. The tenant's and the user's counts read at most
 * `maxOpenJobsPerTenant` and `maxOpenJobsPerUser` index entries; the instance's is one count,
 * shared by all uploads for COUNT_TTL_MS.
 */
export function addEtlBackPressure(app: FastifyInstance, ctx: Pick<AppContext, 'readStore'>, limits: EtlBacklogLimits): void {
  const backlog = instanceBacklog(ctx.readStore);
  app.addHook('preParsing', async (request, _reply, payload) => {
    const principal = request.principal;
    if (principal?.kind !== 'user') return payload;
    if ((await backlog()) >= limits.maxOpenJobs) {
      throw problems.tooManyRequests(`the processing queue holds ${limits.maxOpenJobs} uploads or more; retry later`, 5);
    }
    const tenant = await ctx.readStore.find('etl_jobs', { filter: { tenant_id: principal.tenantId, status: OPEN }, limit: limits.maxOpenJobsPerTenant, fields: ['_id'] });
    if (tenant.length >= limits.maxOpenJobsPerTenant) {
      throw problems.tooManyRequests(`this tenant has ${limits.maxOpenJobsPerTenant} uploads waiting to be processed; retry once some are done`, 2);
    }
    const own = await ctx.readStore.find('etl_jobs', { filter: { user_id: principal.userId, status: OPEN }, limit: limits.maxOpenJobsPerUser, fields: ['_id'] });
    if (own.length >= limits.maxOpenJobsPerUser) {
      throw problems.tooManyRequests(`this user has ${limits.maxOpenJobsPerUser} uploads waiting to be processed; retry once some are done`, 2);
    }
    return payload;
  });
}

/** The instance's open ETL jobs, counted at most once per COUNT_TTL_MS (concurrent callers share one count). */
function instanceBacklog(readStore: ReadStore): () => Promise<number> {
  let cached: { at: number; count: Promise<number> } | null = null;
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at > COUNT_TTL_MS) {
      const count = readStore.count('etl_jobs', { status: OPEN });
      // A failed count is not kept: the next upload asks again.
      count.catch(() => (cached = null));
      cached = { at: now, count };
    }
    return cached.count;
  };
}
