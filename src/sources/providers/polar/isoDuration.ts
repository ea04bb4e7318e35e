import { RecordError } from '../../shared/connectorRecords.js';

const DURATION = /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/**
 * Polar's durations: ISO 8601 (`PT2H44M45S`, `PT45.5S`, `P1DT2H`) → seconds. Years and months
 * have no fixed length and never describe an exercise, so they are refused.
 */
export function isoDurationSeconds(v: unknown, field: string): number {
  if (typeof v !== 'string') throw new RecordError(`${field} is ${v === undefined || v === null ? 'missing' : 'not an ISO 8601 duration'}`);
  const m = DURATION.exec(v);
  if (!m || v === 'P' || v.endsWith('T')) throw new RecordError(`${field} ${JSON.stringify(v).slice(0, 40)} is not an ISO 8601 duration such as PT1H2M3S`);
  const [d, h, mi, s] = [m[1], m[2], m[3], m[4]].map((x) => (x === undefined ? 0 : Number(x)));
  return Math.round((d! * 86_400 + h! * 3600 + mi! * 60 + s!) * 1000) / 1000;
}
