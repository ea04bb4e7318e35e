import { baseName, type ArchiveEntry } from '../exportShared/zipArchive.js';

/**
 * Which file of a Fitbit export is what. Files are known by their own name, whatever folder holds
 * them: Google Takeout puts the per-day JSON files in `Takeout/Fitbit/Global Export Data/`, the
 * older account export ("user-site-export", "MyFitbitData") in per-category folders, and the newer
 * CSV files sit in folders such as `Heart Rate Variability/` or `Oxygen Saturation (SpO2)/` that
 * people rename when they unpack and re-zip. docs/formats/fitbit-takeout.md lists every file.
 */

export type FileKind =
  | 'profile'
  | 'height'
  | 'sleep_score'
  | 'heart_rate'
  | 'steps'
  | 'distance'
  | 'calories'
  | 'resting_heart_rate'
  | 'demographic_vo2_max'
  | 'weight'
  | 'sleep'
  | 'exercise'
  | 'hrv_daily'
  | 'respiratory_rate_daily'
  | 'spo2_daily'
  | 'readiness_daily'
  | 'computed_temperature';

const DATED = '\\d{4}-\\d{2}-\\d{2}';
const KINDS: readonly (readonly [FileKind, RegExp])[] = [
  ['profile', /^Profile\.csv$/i],
  ['height', new RegExp(`^height-${DATED}\\.json$`)],
  ['sleep_score', /^sleep_score\.csv$/],
  ['heart_rate', new RegExp(`^heart_rate-${DATED}\\.json$`)],
  ['steps', new RegExp(`^steps-${DATED}\\.json$`)],
  ['distance', new RegExp(`^distance-${DATED}\\.json$`)],
  ['calories', new RegExp(`^calories-${DATED}\\.json$`)],
  ['resting_heart_rate', new RegExp(`^resting_heart_rate-${DATED}\\.json$`)],
  ['demographic_vo2_max', new RegExp(`^demographic_vo2_max-${DATED}\\.json$`)],
  ['weight', new RegExp(`^weight-${DATED}\\.json$`)],
  ['sleep', new RegExp(`^sleep-${DATED}\\.json$`)],
  ['exercise', /^exercise-\d+\.json$/],
  ['hrv_daily', /^Daily Heart Rate Variability Summary - .*\.csv$/],
  ['respiratory_rate_daily', /^Daily Respiratory Rate Summary - .*\.csv$/],
  ['spo2_daily', /^Daily SpO2 - .*\.csv$/],
  ['readiness_daily', /^Daily Readiness Score - .*\.csv$/],
  ['computed_temperature', /^Computed Temperature - .*\.csv$/],
];

/** The order kinds are read in: the profile and heights first (zone, weight units), sleep scores before the sleep logs they join. */
const ORDER: ReadonlyMap<FileKind, number> = new Map(KINDS.map(([k], i) => [k, i]));

/** Fitbit files read and deliberately not imported (no home in the catalog, or a finer copy of what is imported). */
const KNOWN_NOT_IMPORTED: readonly RegExp[] = [
  new RegExp(`^(altitude|swim_lengths_data|time_in_heart_rate_zones|lightly_active_minutes|moderately_active_minutes|very_active_minutes|sedentary_minutes|run_vo2_max)-${DATED}\\.json$`),
  /^estimated_oxygen_variation-.*\.csv$/,
  /^(Minute SpO2|Heart Rate Variability Details|Heart Rate Variability Histogram|Device Temperature|Wrist Temperature|Active Zone Minutes) - .*\.csv$/,
  /^(Stress Score|Sleep Profile)\.csv$/,
];

export type ClassifiedEntry = { entry: ArchiveEntry; kind: FileKind };

export function classify(entries: readonly ArchiveEntry[]): { files: ClassifiedEntry[]; otherFitbitFiles: number } {
  const files: ClassifiedEntry[] = [];
  let otherFitbitFiles = 0;
  for (const entry of entries) {
    const name = baseName(entry.name);
    const kind = KINDS.find(([, re]) => re.test(name))?.[0];
    if (kind) files.push({ entry, kind });
    else if (KNOWN_NOT_IMPORTED.some((re) => re.test(name))) otherFitbitFiles++;
  }
  files.sort((a, b) => ORDER.get(a.kind)! - ORDER.get(b.kind)! || a.entry.index - b.entry.index);
  return { files, otherFitbitFiles };
}
