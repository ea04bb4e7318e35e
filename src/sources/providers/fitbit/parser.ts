import type { DeviceParser, ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { decodeActivityLogs, decodeActivitySummary } from './decodeActivity.js';
import { decodeBodyFat, decodeWeight } from './decodeBody.js';
import { decodeHeartIntraday, decodeStepsIntraday } from './decodeIntraday.js';
import { decodeSleep } from './decodeSleep.js';
import { decodeNightly } from './decodeVitals.js';
import { isFitbitDataType, type FitbitDataType } from './dataTypes.js';
import { rejected, unwrapAnswer, type FitbitPayload } from './fitbitPayload.js';

const DECODERS: Readonly<Record<FitbitDataType, (p: FitbitPayload) => ParseItem[]>> = {
  activity_summary: (p) => decodeActivitySummary(p.answer, p.date, p.zone),
  heart_intraday: (p) => decodeHeartIntraday(p.answer, p.zone),
  steps_intraday: (p) => decodeStepsIntraday(p.answer, p.zone),
  activity_logs: (p) => decodeActivityLogs(p.answer, p.zone),
  sleep: (p) => decodeSleep(p.answer, p.zone),
  hrv: (p) => decodeNightly('hrv', p.answer, p.zone),
  spo2: (p) => decodeNightly('spo2', p.answer, p.zone),
  breathing_rate: (p) => decodeNightly('breathing_rate', p.answer, p.zone),
  weight: (p) => decodeWeight(p.answer, p.zone),
  body_fat: (p) => decodeBodyFat(p.answer, p.zone),
};

/** Decodes the payloads the Fitbit connector stored (docs/connectors/fitbit.md), one decoder per data type. */
export const fitbitParser: DeviceParser = {
  slug: 'fitbit',
  async *parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    const dataType = ctx.dataType;
    if (!isFitbitDataType(dataType)) {
      yield rejected('payload', `data type ${JSON.stringify(dataType)} is not one the Fitbit connector stores`, payload.subarray(0, 256).toString('utf8'));
      return;
    }
    let items: ParseItem[];
    try {
      items = DECODERS[dataType](unwrapAnswer(payload));
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      items = [rejected('payload', err.message, payload.subarray(0, 1024).toString('utf8'))];
    }
    yield* items;
  },
};
