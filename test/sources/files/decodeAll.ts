import type { NormalizedRecord, ParseContext, ParseItem, RejectedItem } from '../../../commands/ingestion/records.js';
import type { ByteSource, ImportDecoder } from '../../../src/sources/files/importSource.js';

export const CTX: ParseContext = { provider: 'test-import', receivedAt: '2025-06-01T00:00:00.000Z', dataType: null };

export type Decoded = { items: ParseItem[]; records: NormalizedRecord[]; rejected: RejectedItem[] };

export async function decodeAll(decoder: ImportDecoder, source: ByteSource, ctx: ParseContext = CTX): Promise<Decoded> {
  const items: ParseItem[] = [];
  for await (const item of decoder.decode(source, ctx)) items.push(item);
  return {
    items,
    records: items.flatMap((i) => ('record' in i ? [i.record] : [])),
    rejected: items.flatMap((i) => ('rejected' in i ? [i.rejected] : [])),
  };
}

/** Records per kind (quantities and categories per type), as the upload outcome counts them. */
export function countByKind(records: readonly NormalizedRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) {
    const key = r.kind === 'quantity' || r.kind === 'category' ? `${r.kind}:${r.type}` : r.kind === 'workout' ? 'workout' : r.kind;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

export function ofType<K extends NormalizedRecord['kind']>(records: readonly NormalizedRecord[], kind: K, type?: string): Extract<NormalizedRecord, { kind: K }>[] {
  return records.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind && (type === undefined || (r as { type?: string }).type === type));
}
