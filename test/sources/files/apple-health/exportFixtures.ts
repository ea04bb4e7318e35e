import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import yazl from 'yazl';
import { IOS16_DOCTYPE } from '../../../../bench/support/appleExportGenerator.js';
import type { NormalizedRecord, ParseItem, RejectedItem } from '../../../../commands/ingestion/records.js';
import { appleHealthImport } from '../../../../src/sources/files/apple-health/appleHealthDecoder.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';

/** Test exports: an export.xml around given elements, zips of given entries, and decoding them. */

/** The document type declaration iOS 16+ writes (the benchmark's generator has it). */
export const DOCTYPE = IOS16_DOCTYPE;

/** The same with the kind of damage some iOS versions wrote: an attribute list never closed, a stray bracket. */
export const DAMAGED_DOCTYPE = `<!DOCTYPE HealthData [
<!-- HealthKit Export Version: 11 -->
<!ATTLIST Record
  type          CDATA #REQUIRED
  value         CDATA #IMPLIED
<!ELEMENT Correlation ((MetadataEntry|Record)*)>
]]>`;

export function exportXml(body: string, opts: { doctype?: string | null; bom?: boolean } = {}): string {
  const doctype = opts.doctype === undefined ? DOCTYPE : opts.doctype;
  return `${opts.bom ? '\uFEFF' : ''}<?xml version="1.0" encoding="UTF-8"?>\n${doctype ? `${doctype}\n` : ''}<HealthData locale="en_US">\n <ExportDate value="2024-03-31 12:00:00 +0200"/>\n <Me HKCharacteristicTypeIdentifierDateOfBirth="" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexNotSet"/>\n${body}\n</HealthData>\n`;
}

export async function zipOf(entries: Record<string, string | Buffer>, opts: { compress?: boolean } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(entries)) {
    zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name, { compress: opts.compress ?? true, mtime: new Date(0) });
  }
  zip.end();
  const parts: Buffer[] = [];
  for await (const chunk of zip.outputStream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

export const gzip = (b: string | Buffer) => gzipSync(b);

/** A zip whose export.xml entry is damaged from its first compressed byte (a cut or overwritten download). */
export async function zipWithDamagedExportXml(): Promise<Buffer> {
  const xml = exportXml(Array.from({ length: 500 }, (_, i) => ` <Record type="HKQuantityTypeIdentifierStepCount" sourceName="P" unit="count" startDate="2024-05-01 08:00:00 +0200" endDate="2024-05-01 08:10:00 +0200" value="${i}"/>`).join('\n'));
  const zip = Buffer.from(await zipOf({ 'apple_health_export/export.xml': xml }));
  const dataStart = 30 + zip.readUInt16LE(26) + zip.readUInt16LE(28);
  // 0xff: a deflate block of the reserved type 11, which no inflater reads past.
  zip.fill(0xff, dataStart, dataStart + 16);
  return zip;
}

export type Decoded = { items: ParseItem[]; records: NormalizedRecord[]; rejected: RejectedItem[] };

export async function decode(body: string | Buffer): Promise<Decoded> {
  const items: ParseItem[] = [];
  const ctx = { provider: 'apple-health', receivedAt: '2026-11-01T00:00:00.000Z', dataType: null };
  for await (const item of appleHealthImport.decode(bufferByteSource(Buffer.isBuffer(body) ? body : Buffer.from(body)), ctx)) items.push(item);
  return {
    items,
    records: items.flatMap((i) => ('record' in i ? [i.record] : [])),
    rejected: items.flatMap((i) => ('rejected' in i ? [i.rejected] : [])),
  };
}

export function ofKind<K extends NormalizedRecord['kind']>(records: NormalizedRecord[], kind: K): Extract<NormalizedRecord, { kind: K }>[] {
  return records.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind);
}

/**
 * The public sample exports (`../shared/realdata/` from the project root, or REALDATA_DIR): read by
 * path, never copied. Null when absent (the caller skips with one line).
 */
export function realdata(...path: string[]): string | null {
  const root = process.env.REALDATA_DIR ?? resolve(process.cwd(), '../shared/realdata');
  const p = resolve(root, ...path);
  return existsSync(p) ? p : null;
}
