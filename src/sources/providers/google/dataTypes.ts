import { GOOGLE } from '../../../catalog/providers.js';

/**
 * The Google Health data types this connector reads: the URL identifier (hyphenated), the member
 * of a DataPoint holding the value (`heartRate`), the filter's field name (underscored), how its
 * time is given (a `sampleTime`, an `interval`, a civil `date`), and the scope that opens it.
 */
export type GoogleRecordShape = 'sample' | 'interval' | 'daily' | 'session';
export type GoogleDataType = { id: (typeof GOOGLE.dataTypes)[number]; member: string; filter: string; shape: GoogleRecordShape; scope: string };

const [ACTIVITY, METRICS, SLEEP] = Object.keys(GOOGLE.oauth.scopes) as [string, string, string];

const t = (id: GoogleDataType['id'], member: string, shape: GoogleRecordShape, scope: string): GoogleDataType => ({ id, member, filter: id.replace(/-/g, '_'), shape, scope });

export const GOOGLE_DATA_TYPES: readonly GoogleDataType[] = [
  t('heart-rate', 'heartRate', 'sample', METRICS),
  t('steps', 'steps', 'interval', ACTIVITY),
  t('distance', 'distance', 'interval', ACTIVITY),
  t('active-energy-burned', 'activeEnergyBurned', 'interval', ACTIVITY),
  t('sleep', 'sleep', 'session', SLEEP),
  t('exercise', 'exercise', 'session', ACTIVITY),
  t('weight', 'weight', 'sample', METRICS),
  t('body-fat', 'bodyFat', 'sample', METRICS),
  t('oxygen-saturation', 'oxygenSaturation', 'sample', METRICS),
  t('heart-rate-variability', 'heartRateVariability', 'sample', METRICS),
  t('daily-resting-heart-rate', 'dailyRestingHeartRate', 'daily', METRICS),
  t('daily-respiratory-rate', 'dailyRespiratoryRate', 'daily', METRICS),
  t('vo2-max', 'vo2Max', 'sample', METRICS),
];

export const googleDataType = (id: string): GoogleDataType | null => GOOGLE_DATA_TYPES.find((d) => d.id === id) ?? null;

/**
 * The list filter of a window: what the API filters on per shape (`<type>.sample_time.physical_time`,
 * `<type>.interval.start_time`, `<type>.date`), start included, end excluded.
 */
export function windowFilter(d: GoogleDataType, start: Date, end: Date): string {
  if (d.shape === 'daily') {
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    return `${d.filter}.date >= "${day(start.getTime() - 86_400_000)}" AND ${d.filter}.date <= "${day(end.getTime())}"`;
  }
  const field = d.shape === 'sample' ? `${d.filter}.sample_time.physical_time` : `${d.filter}.interval.start_time`;
  return `${field} >= "${start.toISOString()}" AND ${field} < "${end.toISOString()}"`;
}
