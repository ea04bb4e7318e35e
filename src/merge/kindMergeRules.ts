import type { MetricGroup } from '../catalog/quantityCatalog.js';
import { matchReachMs } from './matchRules.js';
import type { MergeRule } from './sampleMergeRule.js';
import { sourceOrderFor, type SourcePriorities } from './sourceRanking.js';

const HOUR_MS = 3_600_000;

/** Merged-view group of a category type: sleep stages rank as sleep, everything else as other. */
export const categoryGroup = (type: string): MetricGroup => (type === 'sleep_analysis' ? 'sleep' : 'other');

/**
 * Category samples of one type match another source's of the same type when their intervals
 * overlap (spec "Merged view": anything else), ranked by that type's order. A sample can reach
 * back as far as the longest worth looking for (an in-bed interval, a long mindful session).
 */
export const categoryMergeRule = (type: string, priorities?: SourcePriorities): MergeRule => ({
  rule: 'other',
  order: sourceOrderFor(type, categoryGroup(type), priorities),
  reachMs: 0,
  lookbackMs: 36 * HOUR_MS,
});

/** Sleep sessions match when they share at least half of the shorter one; order of `sleep`. */
export const sleepMergeRule = (priorities?: SourcePriorities): MergeRule => ({
  rule: 'session',
  order: sourceOrderFor('sleep', 'sleep', priorities),
  reachMs: matchReachMs('session'),
  lookbackMs: 36 * HOUR_MS,
});

/**
 * Workouts match like sessions, whatever activity each source called them (the same session is
 * often labelled differently); order of `workouts`; multi-day events reach back three days.
 */
export const workoutMergeRule = (priorities?: SourcePriorities): MergeRule => ({
  rule: 'session',
  order: sourceOrderFor('workouts', 'workouts', priorities),
  reachMs: matchReachMs('session'),
  lookbackMs: 72 * HOUR_MS,
});

/**
 * A daily summary is a day total: it overlaps the whole day (spec "Merged view", counts), so two
 * sources' summaries of the same date match; order of `daily`, then the activity group's.
 */
export const dailyMergeRule = (priorities?: SourcePriorities): MergeRule => ({
  rule: 'count',
  order: sourceOrderFor('daily', 'activity', priorities),
  reachMs: 0,
  lookbackMs: 0,
});
