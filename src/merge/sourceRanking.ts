import type { MetricGroup } from '../catalog/quantityCatalog.js';

/**
 * Spec "Merged view", ranking: sources rank by `source`; within one source a body-worn stream
 * ranks before others; a remaining tie goes to the provider name. The order is the user's for
 * the metric, its group, `*`, then this built-in order per group (docs/merged-view.md). A source
 * missing from an order ranks after every listed one.
 */
export const BUILTIN_SOURCE_ORDER: Readonly<Record<MetricGroup, readonly string[]>> = {
  heart: ['apple', 'garmin', 'polar', 'whoop', 'oura', 'fitbit', 'samsung', 'google', 'coros', 'suunto', 'withings', 'xiaomi', 'zepp', 'huawei'],
  vitals: ['apple', 'garmin', 'oura', 'whoop', 'polar', 'withings', 'fitbit', 'samsung', 'google', 'omron'],
  activity: ['apple', 'garmin', 'fitbit', 'samsung', 'google', 'polar', 'oura', 'whoop', 'coros', 'suunto', 'xiaomi', 'zepp', 'huawei'],
  recovery: ['oura', 'whoop', 'garmin', 'apple', 'polar', 'fitbit', 'samsung', 'google'],
  sleep: ['oura', 'whoop', 'eightsleep', 'garmin', 'apple', 'fitbit', 'withings', 'samsung', 'google', 'polar'],
  body: ['withings', 'garmin', 'fitbit', 'omron', 'apple', 'samsung', 'google'],
  workouts: ['garmin', 'polar', 'coros', 'suunto', 'wahoo', 'apple', 'strava', 'peloton', 'fitbit', 'samsung', 'google'],
  nutrition: ['myfitnesspal', 'cronometer', 'lifesum', 'apple', 'google', 'samsung'],
  other: [],
};

export type Stream = { source: string; body_worn: boolean; provider: string };

/** User orders keyed by metric, group or `*` (set by PUT /v1/users/{id}/source-priorities). */
export type SourcePriorities = Readonly<Record<string, readonly string[]>>;

export function sourceOrderFor(metric: string, group: MetricGroup, priorities: SourcePriorities = {}): readonly string[] {
  return priorities[metric] ?? priorities[group] ?? priorities['*'] ?? BUILTIN_SOURCE_ORDER[group];
}

/** Negative when `a` ranks before `b`. */
export function compareStreams(a: Stream, b: Stream, order: readonly string[]): number {
  const ra = order.indexOf(a.source);
  const rb = order.indexOf(b.source);
  const ia = ra === -1 ? Number.MAX_SAFE_INTEGER : ra;
  const ib = rb === -1 ? Number.MAX_SAFE_INTEGER : rb;
  if (ia !== ib) return ia - ib;
  if (a.source !== b.source) return a.source < b.source ? -1 : 1;
  if (a.body_worn !== b.body_worn) return a.body_worn ? -1 : 1;
  if (a.provider !== b.provider) return a.provider < b.provider ? -1 : 1;
  return 0;
}
