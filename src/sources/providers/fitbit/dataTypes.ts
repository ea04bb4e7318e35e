import { FITBIT } from '../../../catalog/providers.js';

/**
 * The payloads the Fitbit connector stores, each with the scope that opens it. A notification
 * names Fitbit's subscription collection (`activities`, `body`, `sleep`): it stands for the data
 * types of that collection.
 */
export const FITBIT_DATA_TYPES = FITBIT.dataTypes;
export type FitbitDataType = (typeof FITBIT_DATA_TYPES)[number];

export const SCOPE_OF: Readonly<Record<FitbitDataType, string>> = {
  activity_summary: 'activity',
  heart_intraday: 'heartrate',
  steps_intraday: 'activity',
  activity_logs: 'activity',
  sleep: 'sleep',
  hrv: 'heartrate',
  spo2: 'oxygen_saturation',
  breathing_rate: 'respiratory_rate',
  weight: 'weight',
  body_fat: 'weight',
};

export const COLLECTIONS: Readonly<Record<string, readonly FitbitDataType[]>> = {
  activities: ['activity_summary', 'heart_intraday', 'steps_intraday', 'activity_logs'],
  body: ['weight', 'body_fat'],
  sleep: ['sleep', 'hrv', 'spo2', 'breathing_rate'],
};

export function isFitbitDataType(v: string | null): v is FitbitDataType {
  return v !== null && (FITBIT_DATA_TYPES as readonly string[]).includes(v);
}
