import { categoryMaxSpanMs, MAX_SPAN_MS } from '../catalog/intervalBounds.js';
import type { MetricGroup } from '../catalog/quantityCatalog.js';
import { mergeRule, type MergeRule } from './sampleMergeRule.js';
import { sourceOrderFor, type SourcePriorities } from './sourceRanking.js';

const DAY_MS = 86_400_000;

/** Merged-view group of a category type: sleep stages rank as sleep, everything else as other. */
export const categoryGroup = (type: string): MetricGroup => (type === 'sleep_analysis' ? 'sleep' : 'other');

/**
 * Category samples of one type match another source's of the same type when their intervals
 * overlap (spec "Merged view": anything else), ranked by that type's order. A sample reaches back
 * as far as its type's longest interval (48 hours; years for states such as a pregnancy).
 */
export const categoryMergeRule = (type: string, priorities?: SourcePriorities): MergeRule =>
  mergeRule('other', sourceOrderFor(type, categoryGroup(type), priorities), categoryMaxSpanMs(type));

/** Sleep sessions match when they share at least half of the shorter one; order of `sleep`. */
export const sleepMergeRule = (priorities?: SourcePriorities): MergeRule => mergeRule('session', sourceOrderFor('sleep', 'sleep', priorities), MAX_SPAN_MS.session);

/**
 * Workouts match like sessions, whatever activity each source called them (the same session is
 * often labelled differently); order of `workouts`.
 */
export const workoutMergeRule = (priorities?: SourcePriorities): MergeRule => mergeRule('session', sourceOrderFor('workouts', 'workouts', priorities), MAX_SPAN_MS.session);

/**
 * A daily summary is a day total: it overlaps the whole day (spec "Merged view", counts), so two
 * sources' summaries of the same date match; order of `daily`, then the activity group's. Every
 * summary spans exactly its day, so none starting on another day can overlap it: no lookback.
 */
export const dailyMergeRule = (priorities?: SourcePriorities): MergeRule => ({ ...mergeRule('count', sourceOrderFor('daily', 'activity', priorities), DAY_MS), lookbackMs: 0 });
