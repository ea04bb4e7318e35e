import type { Observation } from 'fhir/r4.js';
import { getSample } from '../../queries/records/getSample.js';
import { listSamples } from '../../queries/records/listSamples.js';
import { getSleepSession, listSleepSessions } from '../../queries/records/listSleep.js';
import { getWorkout, listWorkouts } from '../../queries/records/listWorkouts.js';
import type { View } from '../../queries/records/view.js';
import type { Window } from '../../queries/records/window.js';
import type { Page, PageRequest } from '../../queries/shared/page.js';
import { findQuantityType, QUANTITY_CATALOG } from '../catalog/quantityCatalog.js';
import type { ReadStore } from '../readstore/readStore.js';
import { observationOfSample, sampleIdOf } from './observationOfSample.js';
import { observationOfSleep, sleepIdOf, SLEEP_DURATION_LOINC } from './observationOfSleep.js';
import { observationOfWorkout, WORKOUT_LOINC, workoutIdOf } from './observationOfWorkout.js';

type ListQuery = { userId: string; window: Window; view: View };

/** One kind of record served as Observations of one LOINC code, listed by the same query as its REST route. */
export type ObservationSource = { code: string; list: (readStore: ReadStore, q: ListQuery, page: PageRequest) => Promise<Page<Observation>> };

const mapPage = <T>(page: Page<T>, map: (row: T) => Observation): Page<Observation> => ({ items: page.items.map(map), next: page.next });

/** Every source in a fixed order: the catalog's quantity types with a LOINC code, then sleep sessions, then workouts. */
const SOURCES: readonly ObservationSource[] = [
  ...QUANTITY_CATALOG.filter((t) => t.loinc_code !== null).map(
    (t): ObservationSource => ({
      code: t.loinc_code!,
      list: async (readStore, q, page) => mapPage(await listSamples(readStore, { ...q, type: t.type }, page), (s) => observationOfSample(s, q.userId)),
    }),
  ),
  {
    code: SLEEP_DURATION_LOINC,
    list: async (readStore, q, page) => mapPage(await listSleepSessions(readStore, q, page), (s) => observationOfSleep(s, q.userId)),
  },
  {
    code: WORKOUT_LOINC,
    list: async (readStore, q, page) => mapPage(await listWorkouts(readStore, q, page), (w) => observationOfWorkout(w, q.userId)),
  },
];

/** The sources a search reads, in the fixed order; all of them without a code filter. */
export function sourcesFor(codes: readonly string[] | null): ObservationSource[] {
  return SOURCES.filter((s) => codes === null || codes.includes(s.code));
}

/** Observation/{id}: `sample-<id>`, `sleep-<id>` or `workout-<id>`; null for any other id, another user's record or a sample type without LOINC. */
export async function readObservation(readStore: ReadStore, userId: string, id: string): Promise<Observation | null> {
  const sampleId = sampleIdOf(id);
  if (sampleId !== null) {
    const sample = await getSample(readStore, userId, sampleId);
    return sample && findQuantityType(sample.type)?.loinc_code ? observationOfSample(sample, userId) : null;
  }
  const sleepId = sleepIdOf(id);
  if (sleepId !== null) {
    const session = await getSleepSession(readStore, userId, sleepId);
    return session ? observationOfSleep(session, userId) : null;
  }
  const workoutId = workoutIdOf(id);
  if (workoutId !== null) {
    const workout = await getWorkout(readStore, userId, workoutId);
    return workout ? observationOfWorkout(workout, userId) : null;
  }
  return null;
}
