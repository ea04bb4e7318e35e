import { documentParser } from '../../shared/connectorRecords.js';
import { decodeBodyMeasurement } from './decodeBodyMeasurement.js';
import { decodeCycle } from './decodeCycle.js';
import { decodeRecovery } from './decodeRecovery.js';
import { decodeSleep } from './decodeSleep.js';
import { decodeWorkout } from './decodeWorkout.js';

/** WHOOP collections answer `{records: [...], next_token}`; the body measurement is one document. Records are the strap's. */
export const whoopParser = documentParser('whoop', { name: 'WHOOP', source: 'whoop' }, {
  cycle: { list: 'records', decode: decodeCycle },
  recovery: { list: 'records', decode: decodeRecovery },
  sleep: { list: 'records', decode: decodeSleep },
  workout: { list: 'records', decode: decodeWorkout },
  body_measurement: { list: null, decode: (doc, p, ctx) => decodeBodyMeasurement(doc, p, ctx.receivedAt) },
});
