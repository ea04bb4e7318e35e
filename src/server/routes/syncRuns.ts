import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { connectionState, connectionStream } from '../../../commands/connections/connection.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { requestManualSync, type LoadedRun } from '../../../commands/sync/queueSyncRun.js';
import { resolveProviderClient } from '../../../queries/connections/providerKeys.js';
import { getSyncRun, historyNote, listSyncRuns, toSyncRunView, type SyncRunView } from '../../../queries/sync/listSyncRuns.js';
import { CONNECTED_SLUGS, connectedProvider } from '../../catalog/providers.js';
import { followUpWindow, MANUAL_FROM_MAX_MS } from '../../../commands/sync/syncSchedule.js';
import { problems } from '../problems.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const SyncRun = z
  .object({
    id: z.number().int(),
    provider: z.string(),
    trigger: z.enum(['backfill', 'scheduled', 'notification', 'manual']),
    status: z.enum(['queued', 'running', 'retrying', 'rate_limited', 'succeeded', 'failed', 'cancelled']),
    data_type: z.string().nullable().describe('Set when a notification named the single data type to pull'),
    window_start: DateTime,
    window_end: DateTime,
    attempts: z.number().int().describe('Failed attempts so far'),
    objects_stored: z.number().int().nullable().describe('Raw provider payloads stored'),
    error: z.string().nullable().describe("The provider's error of the last failed attempt"),
    created_at: DateTime,
    started_at: DateTime.nullable(),
    finished_at: DateTime.nullable(),
    next_attempt_at: DateTime.nullable(),
    history_limit: z
      .object({ days: z.number().int().describe("The provider's documented history reach in days"), asked_start: DateTime.describe('Where the window would have started without the limit') })
      .nullable()
      .describe("Set on a backfill cut at the provider's history reach (GET /v1/providers history_days); window_start is then where it stopped"),
    note: z.string().nullable().describe('Why the run covers less than asked, in words (a backfill stopped at the provider\'s limit)'),
  })
  .describe('Sync run: one pull of one connection. retrying: the next attempt is due at next_attempt_at; rate_limited: the provider asked to wait until next_attempt_at; failed: attempts spent or the grant refused; cancelled: the connection was disconnected');

const ProviderParam = { provider: z.string().max(64).describe('Provider slug') };
const RunParam = { run_id: z.string().regex(/^[0-9]{1,15}$/, 'run_id is an integer').describe('Sync run id (integer)') };
const SyncBody = z
  .object({ from: z.string().datetime({ offset: true }).optional().describe('Start of the window: at most 30 days back, not in the future') })
  .strict()
  .nullish();

/** A run as its stream holds it, in the resource's shape (the read model may not hold it yet). */
function runView(run: LoadedRun): SyncRunView {
  const s = run.state;
  const q = s.queued!;
  return {
    id: run.id,
    provider: q.provider,
    trigger: q.trigger,
    status: s.status,
    data_type: q.data_type,
    window_start: q.window_start,
    window_end: q.window_end,
    attempts: s.attempts,
    objects_stored: s.objectsStored,
    error: s.error,
    created_at: q.created_at,
    started_at: s.startedAt,
    finished_at: s.finishedAt,
    next_attempt_at: s.status === 'running' ? null : s.nextAttemptAt,
    history_limit: q.history_limit ?? null,
    note: q.history_limit ? historyNote(q.provider, q.history_limit) : null,
  };
}

/**
 * Sync runs (spec "Providers and connections", "Sync run"): a manual pull of a connection and the
 * history of a user's pulls. Mirrored on the admin routes.
 */
export const syncRunsRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {

  app.post(
    '/users/:id/connections/:provider/sync',
    {
      config: { auth: 'tenant', audit: 'connection.sync_requested' },
      schema: {
        summary: 'Pull a connection now (a manual sync run)',
        description:
          'Queues a pull ahead of routine work. The window ends now and starts where the connection\'s data ends minus one hour, a day back for a connection that never synced, or at `from` (at most 30 days back). While a manual run of the connection is queued or running, answers 200 with that run and queues nothing. 409 when the connection does not sync (needs_reauth, disconnected) or the provider is not enabled.',
        tags: ['connections'],
        params: UserParams.extend(ProviderParam),
        body: SyncBody,
        response: withProblems({ 200: SyncRun, 202: SyncRun }, [400, 401, 403, 404, 409]),
      },
    },
    async (request, reply) => {
      const tenantId = request.tenantId!;
      const user = await readableUser(ctx, tenantId, request.params.id);
      const { provider } = request.params;
      const descriptor = connectedProvider(provider);
      if (!descriptor) throw problems.unknownSlug('provider', provider, CONNECTED_SLUGS);
      const now = ctx.sync.now();
      const fromText = request.body?.from;
      const from = fromText ? new Date(fromText) : undefined;
      if (from && from.getTime() > now.getTime()) throw problems.badRequest('from must not be in the future');
      if (from && now.getTime() - from.getTime() > MANUAL_FROM_MAX_MS) throw problems.badRequest('from must be at most 30 days back');

      const { state } = await loadState(ctx.eventStore, connectionStream(user.id, provider), connectionState);
      if (state.status === 'none' || state.tenantId !== tenantId) throw problems.notFound(`the user has no ${provider} connection`);
      if (state.status !== 'active') throw problems.conflict(`the ${provider} connection does not sync: it is ${state.status}${state.status === 'needs_reauth' ? ' (the user must reconnect)' : ''}`);
      if (!ctx.sync.pulls(provider)) throw problems.conflict(`${descriptor.name} is not pulled by this service (it pushes its data)`);
      if (!(await resolveProviderClient(ctx.readStore, ctx.valueSealer, ctx.config.providers, tenantId, provider))) {
        throw problems.conflict(`${descriptor.name} is not enabled for this tenant`);
      }
      const run = await requestManualSync(ctx.eventStore, { tenantId, userId: user.id, provider, dataType: null, at: now, window: (sync) => followUpWindow(sync, now, from) });
      reply.header('location', `/v1/users/${user.id}/sync-runs/${run.id}`);
      if (!run.created) return reply.code(200).send(runView(run));
      await ctx.sync.enqueue(run);
      await ctx.settle(run.id, ['sync_runs']);
      return reply.code(202).send(runView(run));
    },
  );

  app.get(
    '/users/:id/sync-runs',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: "History of the user's pulls, newest first",
        tags: ['connections'],
        params: UserParams,
        querystring: z.object({ ...PagingQuery, provider: z.string().max(64).optional().describe('Only this provider') }),
        response: withProblems({ 200: pageOf(SyncRun) }),
      },
    },
    async (request) => {
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const { provider, cursor, limit } = request.query;
      const scope = cursorScope('sync-runs', user.id, { provider: provider ?? null });
      const after = cursor ? cursors.decode(cursor, scope) : null;
      const page = await listSyncRuns(ctx.readStore, { tenantId: request.tenantId!, userId: user.id, provider }, { after, limit });
      return { data: page.items.map(toSyncRunView), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );

  app.get(
    '/users/:id/sync-runs/:run_id',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'One sync run of the user (where a manual sync request points)',
        tags: ['connections'],
        params: UserParams.extend(RunParam),
        response: withProblems({ 200: SyncRun }),
      },
    },
    async (request) => {
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const run = await getSyncRun(ctx.readStore, { tenantId: request.tenantId!, userId: user.id, id: Number(request.params.run_id) });
      if (!run) throw problems.notFound('sync run not found');
      return toSyncRunView(run);
    },
  );
};
