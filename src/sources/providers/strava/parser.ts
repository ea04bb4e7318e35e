import type { DeviceParser, ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { excerptOf, isObject, RecordError } from '../../shared/connectorRecords.js';
import { jsonEnvelope } from '../../shared/jsonEnvelope.js';
import { decodeActivityPage, decodeWorkout, readStreams } from './decodeActivity.js';

/** The `streams` payload: the activity as listed and its streams answer byte for byte (null when Strava had none). */
export function streamsPayload(activity: unknown, streams: Buffer | null): Buffer {
  return jsonEnvelope({ activity, streams: streams ?? null });
}

function decode(payload: Buffer, dataType: string | null): ParseItem[] {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    throw new RecordError('the answer is not JSON');
  }
  if (dataType === 'activities') return decodeActivityPage(body);
  if (dataType === 'streams') {
    if (!isObject(body) || !isObject(body.activity)) throw new RecordError('the payload is not an activity with its streams');
    return decodeWorkout(body.activity, readStreams(body.streams));
  }
  throw new RecordError(`data type ${JSON.stringify(dataType)} is not one the Strava connector stores`);
}

/** Decodes the payloads the Strava connector stored (docs/connectors/strava.md). */
export const stravaParser: DeviceParser = {
  slug: 'strava',
  async *parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    let items: ParseItem[];
    try {
      items = decode(payload, ctx.dataType);
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      items = [{ rejected: { location: 'body', reason: err.message, excerpt: excerptOf(payload.subarray(0, 1024).toString('utf8')) } }];
    }
    yield* items;
  },
};
