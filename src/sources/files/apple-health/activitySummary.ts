import type { DailySummaryRecord } from '../../../../commands/ingestion/records.js';
import type { Upload } from '../device-a/upload.js';
import { findQuantityType } from '../../../catalog/quantityCatalog.js';
import { contentId } from './exportIds.js';
import { fail, numberOf } from './exportFields.js';
import type { XmlElement } from './exportXmlReader.js';

/**
 * `ActivitySummary` (the Activity rings of one day) → a daily summary: the day as written
 * (`dateComponents`, the user's calendar day), active energy converted to kcal, and the rest
 * (exercise minutes, stand hours, move minutes and every goal) in metadata. Apple computes it on
 * the phone from the watch's samples: the source is apple, with no single device.
 */

const NUMBERS: readonly [attribute: string, key: string][] = [
  ['activeEnergyBurnedGoal', 'active_energy_goal'],
  ['appleMoveTime', 'move_minutes'],
  ['appleMoveTimeGoal', 'move_minutes_goal'],
  ['appleExerciseTime', 'exercise_minutes'],
  ['appleExerciseTimeGoal', 'exercise_minutes_goal'],
  ['appleStandHours', 'stand_hours'],
  ['appleStandHoursGoal', 'stand_hours_goal'],
];

export function activitySummaryRecord(el: XmlElement, up: Upload): DailySummaryRecord {
  const a = el.attrs;
  const date = a.dateComponents;
  if (date === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(date)) fail('dateComponents is not a date (YYYY-MM-DD)');
  const metadata: Record<string, unknown> = {};
  for (const [attribute, key] of NUMBERS) {
    const v = numberOf(a[attribute]);
    if (Number.isFinite(v)) metadata[key] = v;
  }
  let energy: number | null = null;
  const raw = numberOf(a.activeEnergyBurned);
  if (Number.isFinite(raw)) {
    const unit = a.activeEnergyBurnedUnit || 'kcal';
    energy = up.convert(findQuantityType('active_energy_burned')!, raw, unit);
    if (unit !== 'kcal') {
      metadata.original_unit = unit;
      const goal = metadata.active_energy_goal;
      if (typeof goal === 'number') metadata.active_energy_goal = up.convert(findQuantityType('active_energy_burned')!, goal, unit);
    }
  }
  return {
    kind: 'daily_summary',
    external_id: contentId('aha', [date]),
    date,
    steps: null,
    active_energy_kcal: energy,
    distance_m: null,
    resting_heart_rate: null,
    avg_heart_rate: null,
    sleep_seconds: null,
    metadata,
    provider: up.provider,
    source: 'apple',
    device: null,
    body_worn: false,
  };
}
