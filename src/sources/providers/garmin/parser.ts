import type { DeviceParser, ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { isObject, SummaryError } from './fields.js';
import { rejected, type SummaryDecoder } from './decodeContext.js';
import { decodeActivity, decodeActivityDetails } from './decodeActivities.js';
import { decodeBodyComp, decodeUserMetrics } from './decodeBody.js';
import { decodeDaily, decodeEpoch } from './decodeDailies.js';
import { decodeSleep } from './decodeSleep.js';
import { decodeHrv, decodePulseOx, decodeRespiration, decodeStressDetails } from './decodeVitals.js';
import type { SummaryType } from './vocabulary.js';

export const DECODERS: Readonly<Record<SummaryType, SummaryDecoder>> = {
  dailies: decodeDaily,
  epochs: decodeEpoch,
  sleeps: decodeSleep,
  activities: decodeActivity,
  activityDetails: decodeActivityDetails,
  bodyComps: decodeBodyComp,
  hrv: decodeHrv,
  stressDetails: decodeStressDetails,
  pulseox: decodePulseOx,
  respiration: decodeRespiration,
  userMetrics: decodeUserMetrics,
};

const isSummaryType = (t: string): t is SummaryType => Object.hasOwn(DECODERS, t);

/**
 * Decodes one stored Garmin payload: one user's part of a push, `{"<summary type>": [summary, …]}`
 * as `receive` kept it. `ctx.dataType` names the summary type; each summary that cannot be stored
 * is a rejected item (location `<type>[<index>]`), the others go on.
 */
export const garminParser: DeviceParser = {
  slug: 'garmin',
  async *parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    let body: unknown;
    try {
      body = JSON.parse(payload.toString('utf8'));
    } catch {
      yield rejected('payload', 'the payload is not JSON', payload.subarray(0, 200).toString('utf8'));
      return;
    }
    if (!isObject(body)) {
      yield rejected('payload', 'the payload is not a JSON object', body);
      return;
    }
    const types = ctx.dataType ? [ctx.dataType] : Object.keys(body);
    for (const type of types) {
      if (!isSummaryType(type)) {
        yield rejected('payload', `unknown Garmin summary type ${JSON.stringify(type)}`, type);
        continue;
      }
      const items = body[type];
      if (!Array.isArray(items)) {
        yield rejected(type, `${type} is not a list of summaries`, items);
        continue;
      }
      const decode = DECODERS[type];
      for (let i = 0; i < items.length; i++) {
        const location = `${type}[${i}]`;
        const item: unknown = items[i];
        if (!isObject(item)) {
          yield rejected(location, 'not an object', item);
          continue;
        }
        try {
          yield* decode(item, { provider: ctx.provider, location });
        } catch (err) {
          if (!(err instanceof SummaryError)) throw err;
          yield rejected(location, err.message, item);
        }
      }
    }
  },
};
