import type { DeviceParser, Metadata, NormalizedRecord, ParseContext, ParseItem, Provenance, QuantityRecord } from '../../../commands/ingestion/records.js';
import { converter, toStorageUnit, UnitConversionError } from '../../catalog/units.js';
import { isObject, RecordError, textOf, type Json } from './recordError.js';
import { iso } from './providerTimes.js';

/**
 * What every pull connector's decoder shares: reading a provider's JSON answer as a list of
 * documents (each decoded on its own, a bad one rejected alone), reading optional numbers, and
 * building quantity samples in the catalog's storage units with the value as sent kept beside.
 */

export { isObject, RecordError, type Json };

const MAX_EXCERPT_BYTES = 1024;

/** At most 1 KiB of an offending input, for a rejected item. */
export function excerptOf(v: unknown): string {
  const s = textOf(v);
  const bytes = Buffer.from(s, 'utf8');
  // A cut inside a character leaves a replacement mark, never a broken string.
  return bytes.length <= MAX_EXCERPT_BYTES ? s : bytes.subarray(0, MAX_EXCERPT_BYTES).toString('utf8').replace(/\uFFFD+$/, '');
}

/**
 * Decodes one stored answer. `list` names the member holding the documents (`data`, `records`),
 * or null when the answer is itself one document. A body that is not JSON or lacks the list is
 * one rejected item; a document that cannot be decoded is rejected alone, naming its index.
 */
export async function* decodeDocuments(payload: Buffer, list: string | null, decode: (doc: Json) => NormalizedRecord[], what: string): AsyncIterable<ParseItem> {
  let body: unknown;
  try {
    body = JSON.parse(payload.toString('utf8'));
  } catch {
    yield { rejected: { location: 'body', reason: `${what}: the answer is not JSON`, excerpt: excerptOf(payload.subarray(0, MAX_EXCERPT_BYTES).toString('utf8')) } };
    return;
  }
  if (!isObject(body)) {
    yield { rejected: { location: 'body', reason: `${what}: the answer is not a JSON object`, excerpt: excerptOf(body) } };
    return;
  }
  const docs = list === null ? [body] : body[list];
  if (!Array.isArray(docs)) {
    yield { rejected: { location: 'body', reason: `${what}: the answer has no "${list}" array`, excerpt: excerptOf(body) } };
    return;
  }
  for (let i = 0; i < docs.length; i++) {
    const doc: unknown = docs[i];
    let records: NormalizedRecord[];
    try {
      if (!isObject(doc)) throw new RecordError('not an object');
      records = decode(doc);
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      const id = isObject(doc) && (typeof doc.id === 'string' || typeof doc.id === 'number') ? ` ${doc.id}` : '';
      yield { rejected: { location: list === null ? 'body' : `record ${i + 1}`, reason: `${what}${id}: ${err.message}`, excerpt: excerptOf(doc) } };
      continue;
    }
    for (const record of records) yield { record };
  }
}

/** A finite number, or null when absent or null; anything else is an error. */
export function optionalNumber(v: unknown, field: string): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new RecordError(`${field} is not a finite number`);
  return v;
}

export function requiredNumber(v: unknown, field: string): number {
  const n = optionalNumber(v, field);
  if (n === null) throw new RecordError(`${field} is missing`);
  return n;
}

export function optionalString(v: unknown, field: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new RecordError(`${field} is not a string`);
  return v;
}

export function requiredString(v: unknown, field: string): string {
  const s = optionalString(v, field);
  if (s === null || !s.trim()) throw new RecordError(`${field} is missing`);
  return s;
}

/** A value from a unit to another (UCUM), rounded to 12 significant digits; kJ → kcal and the like. */
export function convert(value: number, fromUcum: string, toUcum: string): number {
  const fn = converter(fromUcum, toUcum);
  if (!fn) throw new RecordError(`cannot convert ${fromUcum} to ${toUcum}`);
  return Number(fn(value).toPrecision(12));
}

export type QuantitySpec = {
  external_id: string;
  type: string;
  value: number;
  /** The unit the provider sent it in (UCUM or HealthKit string). */
  unit: string;
  start: number;
  end: number;
  /** Provider fields as sent, plus `timezone` when the provider gave the user's offset. */
  metadata: Metadata;
  was_user_entered?: boolean;
};

/** A quantity sample of a catalog type in its storage unit; `original_value`/`original_unit` say what arrived. */
export function quantity(p: Provenance, q: QuantitySpec): QuantityRecord {
  let stored: { value: number; unit: string };
  try {
    stored = toStorageUnit(q.type, q.value, q.unit);
  } catch (err) {
    if (err instanceof UnitConversionError) throw new RecordError(err.message);
    throw err;
  }
  return {
    kind: 'quantity',
    ...p,
    external_id: q.external_id,
    type: q.type,
    value: stored.value,
    unit: stored.unit,
    start_date: iso(q.start),
    end_date: iso(q.end),
    source_name: null,
    source_bundle_id: null,
    device_model: null,
    product_type: null,
    was_user_entered: q.was_user_entered ?? false,
    metadata: { ...q.metadata, original_value: q.value, original_unit: q.unit },
  };
}

/** The document's fields minus the ones decoded into the record itself (long series and the like). */
export function fieldsExcept(doc: Json, omit: readonly string[]): Metadata {
  const out: Metadata = {};
  for (const [k, v] of Object.entries(doc)) if (!omit.includes(k)) out[k] = v;
  return out;
}

export type DocumentDecoder = (doc: Json, p: Provenance, ctx: ParseContext) => NormalizedRecord[];

/**
 * A connector's parser: per data type, the member of the answer holding the documents (null: the
 * answer is one document) and the decoder of one. `vendor` is the records' source; every record
 * starts body-worn (the decoders clear it for what the user typed in).
 */
export function documentParser(slug: string, vendor: { name: string; source: string }, decoders: Readonly<Record<string, { list: string | null; decode: DocumentDecoder }>>): DeviceParser {
  return {
    slug,
    async *parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
      const d = ctx.dataType ? decoders[ctx.dataType] : undefined;
      if (!d) {
        yield { rejected: { location: 'body', reason: `${vendor.name} payload of unknown data type ${JSON.stringify(ctx.dataType)}`, excerpt: '' } };
        return;
      }
      const p: Provenance = { provider: ctx.provider, source: vendor.source, device: null, body_worn: true };
      yield* decodeDocuments(payload, d.list, (doc) => d.decode(doc, p, ctx), `${vendor.name} ${ctx.dataType}`);
    },
  };
}
