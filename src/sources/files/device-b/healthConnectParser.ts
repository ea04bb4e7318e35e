import type { DeviceParser, ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { isObject, RecordError } from '../../shared/recordError.js';
import { BodyError, bodyRecords, scanBody, type BodyRecord } from './decodeStream.js';
import { UnreadableExportError } from '../exportShared/unreadableExport.js';
import { menstrualCycles, workoutSummaries, type PendingWorkout, type UploadState } from './endOfUpload.js';
import { bodyRejected, recordTypeOf, rejectItem } from './recordCommon.js';
import { exerciseSession, parseRecord } from './recordMappers.js';

export { HEALTH_CONNECT_RECORD_TYPES } from './recordTypes.js';
export { EXERCISE_ACTIVITY } from './vocabulary.js';

/**
 * device-b: Android Health Connect (contracts.md §3). The upload is `{"records":[…]}`, gzip or
 * not; each record is named as androidx.health.connect.client.records.* names it. The accepted
 * shapes, the mapping to catalog types and every enumeration table are in docs/formats/device-b.md.
 *
 * The parts: decodeStream.ts reads the body as a stream of records; healthConnectTimes.ts reads
 * instants and zone offsets; unitMapping.ts turns Health Connect's unit objects
 * (`{"inPounds": 154.3}`) into storage units through UCUM and holds the validation ranges;
 * vocabulary.ts holds the int constants (stages, exercise types, flows, meals) and the nutrient
 * tables; recordTypes.ts the record types read; recordCommon.ts what every record has;
 * recordMappers.ts maps each record type onto the normalised records; endOfUpload.ts makes the
 * workouts' summaries and the menstrual cycles (with src/sources/derivations/).
 */

/**
 * The body is streamed twice (decodeStream.ts), so that memory follows the largest record, not
 * the upload:
 *
 * 1. A scan that yields nothing. A body that is not gzip, not JSON or has no `records` array is
 *    ONE rejected item (an object that failed as a whole counts once) and nothing of it is
 *    stored, and the byte that breaks it may be the last one: only a body read to its end may
 *    give records. Such an upload is unreadable as a whole and ends `failed` with the reason
 *    (contracts §17: never `done` with nothing stored). The scan also builds the workouts,
 *    whose summaries take records from anywhere in the upload, before or after the session.
 * 2. The records, each normalised and yielded as soon as it is parsed, and added to the
 *    workouts' summaries on the way.
 *
 * The price is inflating and tokenizing the body twice, instead of holding it.
 */
export const healthConnectParser: DeviceParser = {
  slug: 'device-b',
  async *parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    // Only the last `records` member counts (as with JSON.parse), and it is known at the end.
    let scanned = { member: 0, workouts: [] as PendingWorkout[] };
    const scanRecord = ({ member, index, record: r }: BodyRecord) => {
      if (member !== scanned.member) scanned = { member, workouts: [] };
      if (!isObject(r)) return;
      try {
        if (recordTypeOf(r.recordType) === 'ExerciseSession') exerciseSession(r, index, ctx, { workouts: scanned.workouts, flows: [], periods: [] });
      } catch (err) {
        // Reported where pass 2 meets the record.
        if (!(err instanceof RecordError)) throw err;
      }
    };
    let members: number;
    try {
      members = await scanBody(payload, scanRecord);
    } catch (err) {
      if (!(err instanceof BodyError)) throw err;
      yield bodyRejected(err.message, err.excerpt);
      throw new UnreadableExportError('', `not a readable Health Connect upload: ${err.message}`);
    }
    const workouts = scanned.member === members ? scanned.workouts : [];
    const summaries = workouts.length ? workoutSummaries(workouts) : null;

    // Pass 2 builds each workout again to report its route's bad points in place; the scan's
    // copies are the ones that collect the summaries and are yielded.
    const state: UploadState = { workouts: [], flows: [], periods: [] };
    for await (const { index: i, record: r } of bodyRecords(payload, members)) {
      let items: ParseItem[];
      try {
        if (!isObject(r)) throw new RecordError('record is not an object');
        items = parseRecord(r, i, ctx, state);
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        const id = isObject(r) && isObject(r.metadata) && typeof r.metadata.id === 'string' ? ` ${r.metadata.id}` : '';
        const type = isObject(r) && typeof r.recordType === 'string' ? r.recordType : 'record';
        items = [rejectItem(i, `${type}${id}: ${err.message}`, r)];
      }
      for (const item of items) yield item;
      summaries?.add(r);
    }

    if (summaries) {
      summaries.finish();
      for (const w of workouts) yield { record: w.record };
    }
    for (const cycle of menstrualCycles(state, ctx.provider)) yield { record: cycle };
  },
};
