import { documentParser } from '../../shared/connectorRecords.js';
import { decodeDailyActivity, decodeDailyReadiness, decodeDailySleep, decodeDailySpo2 } from './decodeDaily.js';
import { decodeHeartrate } from './decodeHeartrate.js';
import { decodePersonalInfo } from './decodePersonalInfo.js';
import { decodeSleep } from './decodeSleep.js';
import { decodeWorkout } from './decodeWorkout.js';

/** Oura answers `{data: [...], next_token}`; personal_info is one document. Records are the ring's. */
export const ouraParser = documentParser('oura', { name: 'Oura', source: 'oura' }, {
  daily_activity: { list: 'data', decode: decodeDailyActivity },
  daily_sleep: { list: 'data', decode: decodeDailySleep },
  daily_readiness: { list: 'data', decode: decodeDailyReadiness },
  daily_spo2: { list: 'data', decode: decodeDailySpo2 },
  sleep: { list: 'data', decode: decodeSleep },
  heartrate: { list: 'data', decode: decodeHeartrate },
  workout: { list: 'data', decode: decodeWorkout },
  personal_info: { list: null, decode: (doc, p, ctx) => decodePersonalInfo(doc, p, ctx.receivedAt) },
});
