import type { DeviceParser, NormalizedRecord, ParseContext, ParseItem, Provenance } from '../../../commands/ingestion/records.js';
import { decodeDocuments, type Json } from '../shared/connectorRecords.js';
import { decodeDailyActivity, decodeDailyReadiness, decodeDailySleep, decodeDailySpo2 } from './decodeDaily.js';
import { decodeHeartrate } from './decodeHeartrate.js';
import { decodePersonalInfo } from './decodePersonalInfo.js';
import { decodeSleep } from './decodeSleep.js';
import { decodeWorkout } from './decodeWorkout.js';

/** Every Oura record is the ring's (body-worn), except what the user typed in (decoders say so). */
const ringOf = (provider: string): Provenance => ({ provider, source: 'oura', device: null, body_worn: true });

type Decoder = (doc: Json, p: Provenance, ctx: ParseContext) => NormalizedRecord[];

/** Per data type: the member of the answer holding the documents (null: the answer is one) and the decoder. */
const DECODERS: Readonly<Record<string, { list: string | null; decode: Decoder }>> = {
  daily_activity: { list: 'data', decode: decodeDailyActivity },
  daily_sleep: { list: 'data', decode: decodeDailySleep },
  daily_readiness: { list: 'data', decode: decodeDailyReadiness },
  daily_spo2: { list: 'data', decode: decodeDailySpo2 },
  sleep: { list: 'data', decode: decodeSleep },
  heartrate: { list: 'data', decode: decodeHeartrate },
  workout: { list: 'data', decode: decodeWorkout },
  personal_info: { list: null, decode: (doc, p, ctx) => decodePersonalInfo(doc, p, ctx.receivedAt) },
};

export const OURA_PAYLOAD_TYPES: readonly string[] = Object.keys(DECODERS);

export const ouraParser: DeviceParser = {
  slug: 'oura',
  async *parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    const d = ctx.dataType ? DECODERS[ctx.dataType] : undefined;
    if (!d) {
      yield { rejected: { location: 'body', reason: `Oura payload of unknown data type ${JSON.stringify(ctx.dataType)}`, excerpt: '' } };
      return;
    }
    const p = ringOf(ctx.provider);
    yield* decodeDocuments(payload, d.list, (doc) => d.decode(doc, p, ctx), `Oura ${ctx.dataType}`);
  },
};
