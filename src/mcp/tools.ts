import { z } from 'zod';
import { listUploads } from '../../queries/ingestion/uploads.js';
import { TAG_KINDS } from '../../commands/tags/tag.js';
import { listConnections, toConnectionView } from '../../queries/connections/listConnections.js';
import { coverageReport } from '../../queries/records/coverage.js';
import { listCategorySamples } from '../../queries/records/listCategorySamples.js';
import { listDailySummaries } from '../../queries/records/listDailySummaries.js';
import { listHrv } from '../../queries/records/listHeartbeat.js';
import { listMenstrualCycles } from '../../queries/records/listMenstrualCycles.js';
import { listNutrition } from '../../queries/records/listNutrition.js';
import { listSamples, userHasSamplesOfType } from '../../queries/records/listSamples.js';
import { getSleepSession, listSleepPhases, listSleepSessions } from '../../queries/records/listSleep.js';
import { getWorkout, listRoutePoints, listWorkouts } from '../../queries/records/listWorkouts.js';
import { formatWithOffset, sampleStats, statsWindow } from '../../queries/records/sampleStats.js';
import type { Page } from '../../queries/shared/page.js';
import { listTags } from '../../queries/tags/listTags.js';
import { listUsers } from '../../queries/users/listUsers.js';
import { listDeliveries } from '../../queries/webhooks/webhookDeliveries.js';
import { listWebhooks } from '../../queries/webhooks/webhookEndpoints.js';
import type { AppContext } from '../server/appContext.js';
import { findQuantityType, QUANTITY_CATALOG } from '../catalog/quantityCatalog.js';
import type { Scalar } from '../readstore/readStore.js';
import type { Principal } from '../server/auth.js';
import { HttpProblem } from '../server/problems.js';
import { toCategorySample } from '../server/routes/categorySamples.js';
import { toDailySummary } from '../server/routes/daily.js';
import { rrIntervalPage, toHrv } from '../server/routes/heartbeat.js';
import { toMenstrualCycle } from '../server/routes/menstrualCycles.js';
import { toNutritionLog } from '../server/routes/nutrition.js';
import { cursorScope, readableUser, windowOf } from '../server/routes/recordParams.js';
import { toQuantitySample } from '../server/routes/samples.js';
import { toSleepPhase, toSleepSession } from '../server/routes/sleep.js';
import { toTag } from '../server/routes/tags.js';
import { toUser } from '../server/routes/users.js';
import { toDelivery, toEndpoint } from '../server/routes/webhooks.js';
import { toRoutePoint, toWorkout } from '../server/routes/workouts.js';
import type { CursorCodec } from '../shared/cursor.js';
import { explainSources, ExplainSourcesArgs, explainSourcesType } from './explainSources.js';

/** A refusal the agent can act on: answered as a tool error (`isError: true`), never a protocol error. */
export class ToolRefusal extends Error {
  override name = 'ToolRefusal';
}

export type McpPrincipal = Extract<Principal, { kind: 'tenant' } | { kind: 'user' }>;
export type ToolContext = { ctx: AppContext; cursors: CursorCodec; principal: McpPrincipal };

/** Spec "Agent interface (MCP)": each result is `{records, next_cursor, truncated}`; stats and coverage add their header fields. */
export type ToolAnswer = { records: unknown[]; next_cursor: string | null; truncated: boolean } & Record<string, unknown>;

/** What an audit entry keeps of a call: the tool, the user and the window, never a value read. */
export type ToolCallSummary = { userId: string | null; start: string | null; end: string | null };

type ToolDef<S extends z.ZodObject> = {
  name: string;
  description: string;
  input: S;
  run: (tc: ToolContext, args: z.output<S>, summary: ToolCallSummary) => Promise<ToolAnswer>;
};

const def = <S extends z.ZodObject>(d: ToolDef<S>) => d as unknown as ToolDef<z.ZodObject>;

const UserId = z.string().min(1).optional().describe('User id (uuid). Required with a tenant key; with a user token, omit it or pass the token\'s own user');
const Start = z.string().optional().describe('Inclusive: RFC 3339 time or YYYY-MM-DD (midnight UTC)');
const End = z.string().optional().describe('Exclusive: RFC 3339 time or YYYY-MM-DD (midnight UTC)');
const View = z.enum(['merged', 'all']).default('merged').describe('merged (default): only the best ranked source; all: every source');
const Cursor = z.string().min(1).max(2048).optional().describe('next_cursor of the previous answer, with the same other arguments');
const Limit = z.number().int().min(1).max(1000, 'limit above 1000').default(100).describe('Records per answer, 1 to 1000 (default 100)');
const IntegerId = (what: string) => z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe(`${what} (integer id)`);

/** The user a per-user tool reads: a tenant key names it, a user token reads only its own (spec "Agent interface"). */
export async function userOf(tc: ToolContext, userId: string | undefined, summary: ToolCallSummary) {
  const p = tc.principal;
  let id: string;
  if (p.kind === 'tenant') {
    if (userId === undefined) throw new ToolRefusal('user_id is required with a tenant key');
    id = userId;
  } else {
    if (userId !== undefined && userId.toLowerCase() !== p.userId) throw new ToolRefusal("a user token reads only its own user: omit user_id or pass the token's user");
    id = p.userId;
  }
  summary.userId = id;
  const user = await readableUser(tc.ctx, p.tenantId, id).catch((err: unknown) => {
    if (err instanceof HttpProblem && err.status === 404) throw new ToolRefusal('user not found');
    throw err;
  });
  return user;
}

function tenantKeyOnly(tc: ToolContext, tool: string): string {
  if (tc.principal.kind !== 'tenant') throw new ToolRefusal(`${tool} needs a tenant key`);
  return tc.principal.tenantId;
}

/** Keeps the window of a call for its audit entry and parses it like the REST routes do. */
function windowFor(args: { start?: string; end?: string }, summary: ToolCallSummary) {
  summary.start = args.start ?? null;
  summary.end = args.end ?? null;
  return windowOf(args);
}

/** One page of a keyset list, its cursor bound to the tool, the user and every filter, like the REST cursors. */
async function paged<T, R>(
  tc: ToolContext,
  scope: string,
  cursor: string | undefined,
  limit: number,
  load: (page: { after: Scalar[] | null; limit: number }) => Promise<Page<T>>,
  map: (row: T) => R,
): Promise<ToolAnswer> {
  const after = cursor ? tc.cursors.decode(cursor, scope) : null;
  const page = await load({ after, limit });
  const next = page.next ? tc.cursors.encode(page.next, scope) : null;
  return { records: page.items.map(map), next_cursor: next, truncated: next !== null };
}

const whole = (records: unknown[]): ToolAnswer => ({ records, next_cursor: null, truncated: false });

async function knownQuantityType(tc: ToolContext, userId: string, type: string) {
  if (!findQuantityType(type) && !(await userHasSamplesOfType(tc.ctx.readStore, userId, type))) {
    throw new ToolRefusal(`type ${type} is not in the quantity catalog (see list_quantity_types)`);
  }
}

/** The 17 tools of the spec's table plus explain_sources and list_uploads, each over the query handlers the REST routes call. */
export const TOOLS: readonly ToolDef<z.ZodObject>[] = [
  def({
    name: 'list_users',
    description: "The tenant's users, oldest first (tenant key only).",
    input: z.object({ cursor: Cursor, limit: Limit }),
    run: async (tc, a) => {
      const tenantId = tenantKeyOnly(tc, 'list_users');
      return paged(tc, cursorScope('mcp:list_users', tenantId, {}), a.cursor, a.limit, (p) => listUsers(tc.ctx.readStore, tenantId, p), toUser);
    },
  }),
  def({
    name: 'list_quantity_types',
    description: 'The quantity type catalog: type, storage unit, UCUM unit and LOINC code. Use it to pick the type argument of get_samples and get_sample_stats.',
    input: z.object({}),
    run: async () => whole(QUANTITY_CATALOG.map((t) => ({ type: t.type, unit: t.unit, ucum_unit: t.ucum_unit, loinc_code: t.loinc_code, group: t.group }))),
  }),
  def({
    name: 'get_samples',
    description: 'Quantity samples of one type (heart_rate, step_count, ...), oldest first, values in the storage unit of the type.',
    input: z.object({ user_id: UserId, type: z.string().min(1).describe('Quantity type from list_quantity_types'), start: Start, end: End, view: View, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      await knownQuantityType(tc, user.id, a.type);
      const scope = cursorScope('mcp:get_samples', user.id, { type: a.type, start: a.start, end: a.end, view: a.view });
      return paged(tc, scope, a.cursor, a.limit, (p) => listSamples(tc.ctx.readStore, { userId: user.id, type: a.type, window, view: a.view }, p), toQuantitySample);
    },
  }),
  def({
    name: 'get_category_samples',
    description: 'Category samples (sleep_analysis, mindful sessions, symptoms, ...), oldest first; all types without type.',
    input: z.object({ user_id: UserId, type: z.string().min(1).optional().describe('Category type; all types when absent'), start: Start, end: End, view: View, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      const scope = cursorScope('mcp:get_category_samples', user.id, { type: a.type ?? null, start: a.start, end: a.end, view: a.view });
      return paged(tc, scope, a.cursor, a.limit, (p) => listCategorySamples(tc.ctx.readStore, { userId: user.id, type: a.type, window, view: a.view }, p), toCategorySample);
    },
  }),
  def({
    name: 'get_sleep',
    description: "Sleep sessions by bedtime, oldest first; with session_id, that session's phases instead.",
    input: z.object({ user_id: UserId, session_id: IntegerId('Sleep session').optional(), start: Start, end: End, view: View, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      if (a.session_id !== undefined) {
        const session = await getSleepSession(tc.ctx.readStore, user.id, a.session_id);
        if (!session) throw new ToolRefusal('sleep session not found');
        const scope = cursorScope('mcp:get_sleep:phases', user.id, { session_id: session.id, start: a.start, end: a.end });
        return paged(tc, scope, a.cursor, a.limit, (p) => listSleepPhases(tc.ctx.readStore, { userId: user.id, sessionKey: session._id, window }, p), toSleepPhase(session.id));
      }
      const scope = cursorScope('mcp:get_sleep', user.id, { start: a.start, end: a.end, view: a.view });
      return paged(tc, scope, a.cursor, a.limit, (p) => listSleepSessions(tc.ctx.readStore, { userId: user.id, window, view: a.view }, p), toSleepSession);
    },
  }),
  def({
    name: 'get_workouts',
    description: 'Workouts, oldest first; type filters by activity (running, cycling, ...).',
    input: z.object({ user_id: UserId, type: z.string().min(1).optional().describe('Activity; all activities when absent'), start: Start, end: End, view: View, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      const scope = cursorScope('mcp:get_workouts', user.id, { type: a.type ?? null, start: a.start, end: a.end, view: a.view });
      return paged(tc, scope, a.cursor, a.limit, (p) => listWorkouts(tc.ctx.readStore, { userId: user.id, type: a.type, window, view: a.view }, p), toWorkout);
    },
  }),
  def({
    name: 'get_workout_route',
    description: "GPS points of one workout, in time order.",
    input: z.object({ user_id: UserId, workout_id: IntegerId('Workout'), start: Start, end: End, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      const workout = await getWorkout(tc.ctx.readStore, user.id, a.workout_id);
      if (!workout) throw new ToolRefusal('workout not found');
      const scope = cursorScope('mcp:get_workout_route', user.id, { workout_id: workout.id, start: a.start, end: a.end });
      return paged(tc, scope, a.cursor, a.limit, (p) => listRoutePoints(tc.ctx.readStore, { userId: user.id, workoutKey: workout._id, window }, p), toRoutePoint(workout.id));
    },
  }),
  def({
    name: 'get_nutrition',
    description: 'Nutrition logs from every source, oldest first.',
    input: z.object({ user_id: UserId, start: Start, end: End, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      const scope = cursorScope('mcp:get_nutrition', user.id, { start: a.start, end: a.end });
      return paged(tc, scope, a.cursor, a.limit, (p) => listNutrition(tc.ctx.readStore, { userId: user.id, window }, p), toNutritionLog);
    },
  }),
  def({
    name: 'get_daily',
    description: 'Daily summaries (steps, energy, scores) by date; start and end compared as dates.',
    input: z.object({ user_id: UserId, start: Start, end: End, view: View, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      const scope = cursorScope('mcp:get_daily', user.id, { start: a.start, end: a.end, view: a.view });
      return paged(tc, scope, a.cursor, a.limit, (p) => listDailySummaries(tc.ctx.readStore, { userId: user.id, window, view: a.view }, p), toDailySummary);
    },
  }),
  def({
    name: 'get_rr_intervals',
    description: 'Beat-to-beat (RR) intervals in milliseconds, by beat time; series_id narrows to one series of get_hrv.',
    input: z.object({ user_id: UserId, series_id: IntegerId('Heartbeat series').optional(), start: Start, end: End, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      const scope = cursorScope('mcp:get_rr_intervals', user.id, { series_id: a.series_id ?? null, start: a.start, end: a.end });
      return paged(tc, scope, a.cursor, a.limit, (p) => rrIntervalPage(tc.ctx.readStore, user.id, a.series_id, window, p), (r) => r);
    },
  }),
  def({
    name: 'get_hrv',
    description: 'Heart rate variability per heartbeat series (SDNN, RMSSD), by the series\' first beat.',
    input: z.object({ user_id: UserId, series_id: IntegerId('Heartbeat series').optional(), start: Start, end: End, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      const scope = cursorScope('mcp:get_hrv', user.id, { series_id: a.series_id ?? null, start: a.start, end: a.end });
      return paged(tc, scope, a.cursor, a.limit, (p) => listHrv(tc.ctx.readStore, { userId: user.id, seriesId: a.series_id, window }, p), toHrv);
    },
  }),
  def({
    name: 'get_menstrual_cycles',
    description: "Menstrual cycles selected by their start day.",
    input: z.object({ user_id: UserId, start: Start, end: End, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      const scope = cursorScope('mcp:get_menstrual_cycles', user.id, { start: a.start, end: a.end });
      return paged(tc, scope, a.cursor, a.limit, (p) => listMenstrualCycles(tc.ctx.readStore, { userId: user.id, window }, p), toMenstrualCycle);
    },
  }),
  def({
    name: 'get_sample_stats',
    description:
      'Statistics of one quantity type per hour or day (count, min, max, avg, sum), one series per provider, source and unit; records are the buckets. Best first call for trends over weeks.',
    input: z.object({
      user_id: UserId,
      type: z.string().min(1).describe('Quantity type from list_quantity_types'),
      start: z.string().describe('Inclusive: RFC 3339 time or YYYY-MM-DD (midnight in tz)'),
      end: z.string().describe('Exclusive: RFC 3339 time or YYYY-MM-DD (midnight in tz)'),
      interval: z.enum(['hour', 'day']).default('day'),
      tz: z.string().min(1).default('UTC').describe('IANA time zone; a day runs from local midnight to local midnight'),
      provider: z.string().min(1).optional().describe('Only samples that came through this provider'),
      view: View,
    }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      s.start = a.start;
      s.end = a.end;
      const window = statsWindow(a.start, a.end, a.interval, a.tz);
      await knownQuantityType(tc, user.id, a.type);
      const result = await sampleStats(tc.ctx.readStore, {
        userId: user.id,
        type: a.type,
        window,
        interval: a.interval,
        tz: a.tz,
        view: a.view,
        ...(a.provider !== undefined ? { provider: a.provider } : {}),
      });
      return {
        records: result.buckets,
        next_cursor: null,
        truncated: result.truncated,
        type: a.type,
        interval: a.interval,
        tz: a.tz,
        view: a.view,
        start: formatWithOffset(window.start),
        end: formatWithOffset(window.end),
      };
    },
  }),
  def({
    name: 'get_coverage',
    description:
      'Which providers recorded how many records per day and metric, plus pending and parked ETL jobs, rejected records and records flagged as implausible or future (left out of the merged view and statistics). Without start it covers the 30 days before end (or now). Call it first to see what data exists.',
    input: z.object({ user_id: UserId, provider: z.string().min(1).optional(), start: Start, end: End, view: View }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const given = windowFor(a, s);
      const end = given.end ?? Date.now();
      const window = { start: given.start ?? end - 30 * 86_400_000, end };
      if (given.start === null) s.start = new Date(window.start).toISOString();
      if (given.end === null) s.end = new Date(window.end).toISOString();
      const report = await coverageReport(tc.ctx.readStore, { userId: user.id, window, view: a.view, ...(a.provider !== undefined ? { provider: a.provider } : {}) });
      return {
        records: report.days,
        next_cursor: null,
        truncated: report.truncated,
        pending_jobs: report.pending_jobs,
        parked_jobs: report.parked_jobs,
        rejected_records: report.rejected_records,
        flagged_records: report.flagged_records,
        start: new Date(window.start).toISOString(),
        end: new Date(window.end).toISOString(),
      };
    },
  }),
  def({
    name: 'get_tags',
    description: 'Time tags (illness, travel, training block, ...) overlapping the window: read every figure against them.',
    input: z.object({ user_id: UserId, kind: z.enum(TAG_KINDS).optional(), start: Start, end: End, cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      const scope = cursorScope('mcp:get_tags', user.id, { kind: a.kind, start: a.start, end: a.end });
      return paged(tc, scope, a.cursor, a.limit, (p) => listTags(tc.ctx.readStore, { userId: user.id, kind: a.kind, window }, p), toTag);
    },
  }),
  def({
    name: 'list_connections',
    description: "The user's provider connections: status, last sync and health.",
    input: z.object({ user_id: UserId }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      return whole((await listConnections(tc.ctx.readStore, tc.principal.tenantId, user.id)).map(toConnectionView));
    },
  }),
  def({
    name: 'list_webhooks',
    description: "The tenant's webhook endpoints and their health; with deliveries, each one's 10 latest deliveries (tenant key only).",
    input: z.object({ deliveries: z.boolean().default(false).describe("Add each endpoint's 10 latest deliveries") }),
    run: async (tc, a) => {
      const tenantId = tenantKeyOnly(tc, 'list_webhooks');
      const endpoints = await listWebhooks(tc.ctx.readStore, tenantId);
      const records = await Promise.all(
        endpoints.map(async (e) => {
          if (!a.deliveries) return toEndpoint(e);
          const latest = await listDeliveries(tc.ctx.readStore, e.id, undefined, { limit: 10 });
          return { ...toEndpoint(e), deliveries: latest.items.map(toDelivery) };
        }),
      );
      return whole(records);
    },
  }),
  def({
    name: 'list_uploads',
    description: "The user's uploads and imports with their outcome (contracts §12), newest first: status, progress, records per kind, unchanged, rejected and the first rejections.",
    input: z.object({ user_id: UserId, provider: z.string().min(1).max(64).optional(), status: z.enum(['receiving', 'accepted', 'processing', 'done', 'failed', 'parked']).optional(), cursor: Cursor, limit: Limit }),
    run: async (tc, a, s) => {
      const user = await userOf(tc, a.user_id, s);
      const scope = cursorScope('mcp:list_uploads', user.id, { provider: a.provider ?? null, status: a.status ?? null });
      const q = { userId: user.id, ...(a.provider !== undefined ? { provider: a.provider } : {}), ...(a.status !== undefined ? { status: a.status } : {}) };
      return paged(tc, scope, a.cursor, a.limit, (p) => listUploads(tc.ctx.readStore, tc.ctx.recordsApplied, q, p), (u) => u);
    },
  }),
  def({
    name: 'explain_sources',
    description:
      'For one quantity type (`type`) and window: which sources recorded it (with counts), which one the merged view shows, and by which rule (user order for the metric, its group or *, built-in order, body-worn device, provider tie). Use it before comparing sources.',
    input: ExplainSourcesArgs.extend({ user_id: UserId, start: Start, end: End }),
    run: async (tc, a, s) => {
      const asked = explainSourcesType(a);
      if ('refusal' in asked) throw new ToolRefusal(asked.refusal);
      const user = await userOf(tc, a.user_id, s);
      const window = windowFor(a, s);
      return whole(await explainSources(tc.ctx.readStore, user, asked.type, window));
    },
  }),
];

export const TOOL_BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));
