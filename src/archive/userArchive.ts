import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ReadStore, Scalar } from '../readstore/readStore.js';
import type { Page, PageRequest } from '../../queries/shared/page.js';
import { listObservations } from '../../queries/archive/listObservations.js';
import { userSampleTypes } from '../../queries/records/sampleBlocks.js';
import { listCategorySamples } from '../../queries/records/listCategorySamples.js';
import { listDailySummaries } from '../../queries/records/listDailySummaries.js';
import { listEcgRecordings } from '../../queries/records/listEcg.js';
import { listHrv, listRrIntervals } from '../../queries/records/listHeartbeat.js';
import { listMenstrualCycles } from '../../queries/records/listMenstrualCycles.js';
import { listNutrition } from '../../queries/records/listNutrition.js';
import { listSamples } from '../../queries/records/listSamples.js';
import { listSleepPhases, listSleepSessions } from '../../queries/records/listSleep.js';
import { listRoutePoints, listWorkouts } from '../../queries/records/listWorkouts.js';
import { listTags } from '../../queries/tags/listTags.js';
import type { EcgVoltagesDoc } from '../../projections/records/ecgProjection.js';
import { toCategorySample } from '../server/routes/categorySamples.js';
import { toDailySummary } from '../server/routes/daily.js';
import { toEcgRecording } from '../server/routes/ecg.js';
import { toHrv } from '../server/routes/heartbeat.js';
import { toMenstrualCycle } from '../server/routes/menstrualCycles.js';
import { toNutritionLog } from '../server/routes/nutrition.js';
import { provenanceOf } from '../server/routes/recordSchemas.js';
import { toQuantitySample } from '../server/routes/samples.js';
import { toSleepPhase, toSleepSession } from '../server/routes/sleep.js';
import { toTag } from '../server/routes/tags.js';
import { toRoutePoint, toWorkout } from '../server/routes/workouts.js';

/** Rows per read-model query: each page is written out before the next is read. */
export const ARCHIVE_PAGE = 500;

const ALL = { start: null, end: null };

/**
 * Every page of a keyset-paged query, one at a time. Before each page the event loop gets a turn
 * (a macrotask, not a microtask): the embedded store's queries are synchronous, and without it an
 * archive read as fast as its client takes it would hold the HTTP thread from query to query.
 */
export async function* pages<T>(fetch: (page: PageRequest) => Promise<Page<T>>, limit = ARCHIVE_PAGE): AsyncGenerator<T[]> {
  let after: Scalar[] | null = null;
  do {
    await yieldToEventLoop();
    const page: Page<T> = await fetch({ after, limit });
    if (page.items.length) yield page.items;
    after = page.next;
  } while (after);
}

/** Fields a stored row carries for the service's own use (owner, keys, merged flag), not the user's data. */
const INTERNAL = new Set(['_id', 'user_id', 'tenant_id', 'day', 'hidden', 'excluded']);
const withoutInternal = (doc: Record<string, unknown>) => Object.fromEntries(Object.entries(doc).filter(([k]) => !INTERNAL.has(k)));

/**
 * Contracts §11: every record of the user, kind by kind, oldest first within a kind, each as the
 * reads answer it plus its `kind` (every source: the archive is the user's data, not the merged
 * view; `is_primary_source` says what the merged view shows). Records with parts (sleep phases,
 * route points, RR intervals, ECG voltages) follow their parents' kind, parent by parent. Read a
 * page at a time through the same queries as the reads, so memory stays flat whatever the user
 * holds; the consumer pulls, so a slow client slows the reading, not the memory.
 */
export async function* userArchive(readStore: ReadStore, userId: string): AsyncGenerator<Record<string, unknown>> {
  const u = { userId, window: ALL };
  const all = { ...u, view: 'all' as const };

  for await (const type of userSampleTypes(readStore, userId))
    for await (const items of pages((p) => listSamples(readStore, { ...all, type }, p))) for (const d of items) yield { kind: 'quantity_sample', ...toQuantitySample(d) };
  for await (const items of pages((p) => listCategorySamples(readStore, all, p))) for (const d of items) yield { kind: 'category_sample', ...toCategorySample(d) };
  for await (const items of pages((p) => listSleepSessions(readStore, all, p))) for (const d of items) yield { kind: 'sleep_session', ...toSleepSession(d) };
  for await (const sessions of pages((p) => listSleepSessions(readStore, all, p)))
    for (const s of sessions)
      for await (const items of pages((p) => listSleepPhases(readStore, { ...u, sessionKey: s._id }, p))) for (const d of items) yield { kind: 'sleep_phase', ...toSleepPhase(s.id)(d) };
  for await (const items of pages((p) => listWorkouts(readStore, all, p))) for (const d of items) yield { kind: 'workout', ...toWorkout(d) };
  for await (const workouts of pages((p) => listWorkouts(readStore, all, p)))
    for (const w of workouts)
      for await (const items of pages((p) => listRoutePoints(readStore, { ...u, workoutKey: w._id }, p))) for (const d of items) yield { kind: 'workout_route_point', ...toRoutePoint(w.id)(d) };
  for await (const items of pages((p) => listNutrition(readStore, u, p))) for (const d of items) yield { kind: 'nutrition', ...toNutritionLog(d) };
  for await (const items of pages((p) => listDailySummaries(readStore, all, p))) for (const d of items) yield { kind: 'daily_summary', ...toDailySummary(d) };
  // One recording's voltages at a time: a 30-second ECG is some 15,000 numbers.
  for await (const items of pages((p) => listEcgRecordings(readStore, u, p), 50))
    for (const d of items) {
      const voltages = await readStore.get<EcgVoltagesDoc>('ecg_voltages', d._id);
      yield { kind: 'ecg', ...toEcgRecording(d), voltages: voltages?.voltages ?? [] };
    }
  for await (const items of pages((p) => listHrv(readStore, u, p))) for (const d of items) yield { kind: 'hrv', ...toHrv(d) };
  for await (const series of pages((p) => listHrv(readStore, u, p)))
    for (const s of series)
      for await (const items of pages((p) => listRrIntervals(readStore, { ...u, seriesKey: s._id }, p)))
        for (const r of items) yield { kind: 'rr_interval', series_id: s.id, timestamp: r.timestamp, rr_ms: r.rr_ms, preceded_by_gap: r.preceded_by_gap, ...provenanceOf(r) };
  for await (const items of pages((p) => listMenstrualCycles(readStore, u, p))) for (const d of items) yield { kind: 'menstrual_cycle', ...toMenstrualCycle(d) };
  for await (const items of pages((p) => listObservations(readStore, userId, p))) for (const d of items) yield { ...withoutInternal(d), kind: 'observation' };
  // A tag has a `kind` of its own (illness, travel, …): on its line that is `tag_kind`.
  for await (const items of pages((p) => listTags(readStore, u, p)))
    for (const d of items) {
      const { kind: tagKind, ...tag } = toTag(d);
      yield { kind: 'time_tag', tag_kind: tagKind, ...tag };
    }
}
