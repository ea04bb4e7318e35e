import type { DeviceParser, ParseItem } from '../../../../commands/ingestion/records.js';
import { decodeDocuments, isObject } from '../../shared/connectorRecords.js';
import { decodeActivityDay, decodeStepSamples } from './decodeActivity.js';
import { decodeContinuousHeartRate } from './decodeContinuousHr.js';
import { decodeExercise, decodeExerciseSamples } from './decodeExercises.js';
import { decodePhysicalInformation } from './decodePhysical.js';
import { decodeNight, decodeRecharge } from './decodeSleep.js';

/** Which of an answer's shapes a stored payload holds: Polar's own, or an envelope the pull added context to. */
function peek(payload: Buffer): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(payload.toString('utf8'));
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}

/** Decodes a stored Polar answer by the data type it was pulled as (docs/connectors/polar.md). */
export const polarParser: DeviceParser = {
  slug: 'polar',
  async *parse(payload, ctx): AsyncIterable<ParseItem> {
    switch (ctx.dataType) {
      case 'sleep':
        return yield* decodeDocuments(payload, 'nights', decodeNight, 'sleep night');
      case 'nightly_recharge': {
        const env = peek(payload);
        const offsets = env && isObject(env.offsets) ? env.offsets : {};
        const answer = env && isObject(env.answer) ? Buffer.from(JSON.stringify(env.answer)) : payload;
        return yield* decodeDocuments(answer, 'recharges', (r) => decodeRecharge(r, offsets), 'nightly recharge');
      }
      case 'exercises': {
        const env = peek(payload);
        if (env && 'samples' in env && 'exercise' in env) return yield* decodeDocuments(payload, null, decodeExerciseSamples, 'exercise samples');
        return yield* decodeDocuments(payload, null, decodeExercise, 'exercise');
      }
      case 'activities': {
        const env = peek(payload);
        if (env && 'answer' in env) return yield* decodeDocuments(payload, null, decodeStepSamples, 'step samples');
        return yield* decodeDocuments(payload, null, decodeActivityDay, 'daily activity');
      }
      case 'physical_information':
        return yield* decodeDocuments(payload, null, decodePhysicalInformation, 'physical information');
      case 'continuous_heart_rate':
        return yield* decodeDocuments(payload, null, decodeContinuousHeartRate, 'continuous heart rate');
      default:
        yield { rejected: { location: 'body', reason: `Polar data type ${JSON.stringify(ctx.dataType)} is not one this connector pulls`, excerpt: '' } };
    }
  },
};
