import type { DeviceParser, NormalizedRecord, ParseContext, ParseItem, Provenance } from '../../../commands/ingestion/records.js';
import { decodeDocuments, type Json } from '../shared/connectorRecords.js';
import { decodeBodyMeasurement } from './decodeBodyMeasurement.js';
import { decodeCycle } from './decodeCycle.js';
import { decodeRecovery } from './decodeRecovery.js';
import { decodeSleep } from './decodeSleep.js';
import { decodeWorkout } from './decodeWorkout.js';

/** WHOOP data is the strap's (body-worn), except what the member typed in (decoders say so). */
const strapOf = (provider: string): Provenance => ({ provider, source: 'whoop', device: null, body_worn: true });

type Decoder = (doc: Json, p: Provenance, ctx: ParseContext) => NormalizedRecord[];

/** Per data type: the member holding the documents (`records` in every collection; null: one document) and the decoder. */
const DECODERS: Readonly<Record<string, { list: string | null; decode: Decoder }>> = {
  cycle: { list: 'records', decode: decodeCycle },
  recovery: { list: 'records', decode: decodeRecovery },
  sleep: { list: 'records', decode: decodeSleep },
  workout: { list: 'records', decode: decodeWorkout },
  body_measurement: { list: null, decode: (doc, p, ctx) => decodeBodyMeasurement(doc, p, ctx.receivedAt) },
};

export const WHOOP_PAYLOAD_TYPES: readonly string[] = Object.keys(DECODERS);

export const whoopParser: DeviceParser = {
  slug: 'whoop',
  async *parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    const d = ctx.dataType ? DECODERS[ctx.dataType] : undefined;
    if (!d) {
      yield { rejected: { location: 'body', reason: `WHOOP payload of unknown data type ${JSON.stringify(ctx.dataType)}`, excerpt: '' } };
      return;
    }
    const p = strapOf(ctx.provider);
    yield* decodeDocuments(payload, d.list, (doc) => d.decode(doc, p, ctx), `WHOOP ${ctx.dataType}`);
  },
};
