import { documentParser, type DocumentDecoder } from '../../shared/connectorRecords.js';
import { GOOGLE_DATA_TYPES } from './dataTypes.js';
import { decodeQuantity } from './decodeQuantities.js';
import { decodeExercise, decodeSleep } from './decodeSessions.js';

/**
 * Every list answer is `{dataPoints: [...], nextPageToken}`; each data point holds one member
 * named for its type (`heartRate`, `sleep`, …). Records are Google Health's, each naming the
 * device that recorded it.
 */
const decoderOf = (member: string): DocumentDecoder =>
  member === 'sleep' ? (doc, p) => decodeSleep(doc, p) : member === 'exercise' ? (doc, p) => decodeExercise(doc, p) : (doc, p) => decodeQuantity(member, doc, p);

export const googleParser = documentParser(
  'google',
  { name: 'Google Health', source: 'google' },
  Object.fromEntries(GOOGLE_DATA_TYPES.map((d) => [d.id, { list: 'dataPoints', decode: decoderOf(d.member) }])),
);
