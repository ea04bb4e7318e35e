import type { DeviceParser, ParseItem } from '../../../../commands/ingestion/records.js';
import { decodeActivityDay } from './decodeActivity.js';
import { decodeWithingsList } from './decodeList.js';
import { decodeMeasureGroup } from './decodeMeasures.js';
import { decodeSleepEntry } from './decodeSleep.js';
import { decodeWorkout } from './decodeWorkouts.js';

/** Decodes a stored Withings answer by the data type it was pulled as (docs/connectors/withings.md). */
export const withingsParser: DeviceParser = {
  slug: 'withings',
  async *parse(payload, ctx): AsyncIterable<ParseItem> {
    switch (ctx.dataType) {
      case 'measure':
        return yield* decodeWithingsList(payload, 'measuregrps', decodeMeasureGroup, 'measure group');
      case 'activity':
        return yield* decodeWithingsList(payload, 'activities', (d, b) => decodeActivityDay(d, b, ctx.receivedAt), 'activity day');
      case 'sleep':
        return yield* decodeWithingsList(payload, 'series', decodeSleepEntry, 'sleep');
      case 'workouts':
        return yield* decodeWithingsList(payload, 'series', decodeWorkout, 'workout');
      default:
        yield { rejected: { location: 'body', reason: `Withings data type ${JSON.stringify(ctx.dataType)} is not one this connector pulls`, excerpt: '' } };
    }
  },
};
