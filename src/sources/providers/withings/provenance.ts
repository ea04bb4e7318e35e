import type { Provenance } from '../../../../commands/ingestion/records.js';

/**
 * Withings records come from Withings hardware: `source` is the vendor. Scales, blood pressure
 * cuffs, thermometers and the under-mattress Sleep Analyzer are not worn; watches and trackers
 * (activity, workouts, sleep tracked on the wrist) are.
 */
export function withingsProvenance(device: string | null, bodyWorn: boolean): Provenance {
  return { provider: 'withings', source: 'withings', device, body_worn: bodyWorn };
}

/**
 * Sleep summaries name the kind of device with `model`: 16 is a wrist tracker or watch, 32 the
 * under-mattress Sleep Analyzer. Anything else is read as not worn, which never overstates.
 */
export const SLEEP_MODELS: Readonly<Record<number, { device: string; bodyWorn: boolean }>> = {
  16: { device: 'Withings tracker', bodyWorn: true },
  32: { device: 'Withings Sleep Analyzer', bodyWorn: false },
};
