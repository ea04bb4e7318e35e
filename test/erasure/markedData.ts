import { randomBytes, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { NormalizedRecord } from '../../commands/ingestion/records.js';
import { deviceAForm, listFiles, parsePayload, postUpload, requestFor, waitForEtl } from '../ingest/uploadHelpers.js';
import { expectStatus, type TestApp } from '../support/server.js';

/**
 * Uploads whose every health value, record text and record uuid is unique to one user and
 * provider (markers), and a scanner that looks for them in every file under DATA_DIR: as text
 * (uuids in both cases) and, for values, also as the 8-byte big-endian doubles SQLite stores
 * REAL columns as. What the markers are is read back from the device's own parser, so they are
 * what the service stores, not what it might.
 */
export type Markers = { texts: string[]; uuids: string[]; values: number[] };

const hex = () => randomBytes(6).toString('hex');
/** A value nothing else in the files can spell by chance: 15 significant digits, not a whole number. */
const oddValue = (base: number) => Number((base + Math.random()).toPrecision(15));

/** device-a: heart-rate samples, a night of sleep analysis and a broken line, all marked. */
export function markedHealthKit(tag: string, lines = 40): { payload: Buffer; texts: string[] } {
  const source = `Watch-${tag}-${hex()}`;
  const note = `note-${tag}-${hex()}`;
  const broken = `broken-${tag}-${hex()}`;
  const start = Date.UTC(2026, 10, 2, 8);
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const at = new Date(start + i * 60_000).toISOString().replace('.000Z', 'Z');
    out.push(
      JSON.stringify({
        kind: 'quantity',
        uuid: randomUUID().toUpperCase(),
        type: 'HKQuantityTypeIdentifierHeartRate',
        value: oddValue(60 + (i % 30)),
        unit: 'count/min',
        start_date: at,
        end_date: at,
        source_name: source,
        source_bundle_id: 'com.apple.health.marker',
        device_model: 'Watch',
        product_type: 'Watch7,1',
        was_user_entered: false,
        metadata: { HKTimeZone: 'Europe/Berlin', note },
      }),
    );
  }
  for (const [phase, from, to] of [
    ['HKCategoryValueSleepAnalysisAsleepCore', '2026-11-01T22:30:00Z', '2026-11-02T01:00:00Z'],
    ['HKCategoryValueSleepAnalysisAsleepDeep', '2026-11-02T01:00:00Z', '2026-11-02T02:30:00Z'],
  ]) {
    out.push(JSON.stringify({ kind: 'category', uuid: randomUUID().toUpperCase(), type: 'HKCategoryTypeIdentifierSleepAnalysis', value: phase, start_date: from, end_date: to, source_name: source, source_bundle_id: 'com.apple.health.marker', metadata: { note } }));
  }
  out.push(`{"kind":"quantity","uuid":"${broken}`);
  return { payload: gzipSync(out.join('\n')), texts: [source, note, broken] };
}

/** device-a: `lines` heart-rate samples nobody looks for (bulk that makes a job take a while). */
export function bulkHealthKit(lines: number): Buffer {
  const start = Date.UTC(2026, 9, 1);
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const at = new Date(start + i * 10_000).toISOString();
    out.push(JSON.stringify({ kind: 'quantity', uuid: randomUUID().toUpperCase(), type: 'HKQuantityTypeIdentifierHeartRate', value: 50 + (i % 90), unit: 'count/min', start_date: at, end_date: at, source_name: 'Bulk Watch' }));
  }
  return gzipSync(out.join('\n'));
}

/** device-b: body weights (kilograms) with their own record ids and an app that names the tag. */
export function markedHealthConnect(tag: string, records = 12): { payload: Buffer; texts: string[] } {
  const app = `com.marker.${tag.toLowerCase()}.${hex()}`;
  const start = Date.UTC(2026, 10, 3, 7);
  const list = Array.from({ length: records }, (_, i) => ({
    recordType: 'Weight',
    time: new Date(start + i * 86_400_000).toISOString(),
    zoneOffset: '+01:00',
    weight: { inKilograms: oddValue(70 + i) },
    metadata: { id: randomUUID(), dataOrigin: { packageName: app }, lastModifiedTime: '2026-11-20T07:00:00Z', recordingMethod: 3 },
  }));
  return { payload: Buffer.from(JSON.stringify({ records: list })), texts: [app] };
}

/** What of a payload the service keeps: its records' ids and values as the parser gives them, and the marked texts. */
export async function markersOf(slug: string, payload: Buffer, texts: string[]): Promise<Markers> {
  const { records } = await parsePayload(slug, payload);
  const uuids = records.map((r: NormalizedRecord) => r.external_id).filter((id) => /[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id));
  const values = records.flatMap((r) => (r.kind === 'quantity' && !Number.isInteger(r.value) ? [r.value] : []));
  return { texts, uuids, values };
}

export function mergeMarkers(...all: Markers[]): Markers {
  return { texts: all.flatMap((m) => m.texts), uuids: all.flatMap((m) => m.uuids), values: all.flatMap((m) => m.values) };
}

/** Uploads a payload with a fresh upload token and waits until the user's ETL queue is empty and every read model caught up. */
export async function uploadMarked(t: TestApp, apiKey: string, userId: string, slug: 'device-a' | 'device-b', payload: Buffer): Promise<void> {
  const { token } = await t.mintToken(apiKey, userId, { scopes: ['upload'] });
  const req = slug === 'device-a' ? deviceAForm(payload) : requestFor(slug, payload);
  expectStatus(await postUpload(t, slug, token, `marked-${randomUUID()}`, req), 202);
  await waitForEtl(t, apiKey, userId);
}

const doubleBE = (v: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(v);
  return b;
};

/** The base64url runs a UUID's bytes make in a block's packed ids, at each of the three alignments (none for another id). */
function packedForms(uuid: string): string[] {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(uuid)) return [];
  const bytes = Buffer.from(uuid.replaceAll('-', ''), 'hex');
  // Starting at byte k, a whole number of 3-byte groups: 15, 15 and 12 bytes.
  return [0, 1, 2].map((k) => bytes.subarray(k, k + Math.floor((16 - k) / 3) * 3).toString('base64url'));
}

/** Every marker found in some file under `dir`, with the file (WAL and shared-memory files included). */
export function scanFiles(dir: string, markers: Markers): { marker: string; file: string }[] {
  const needles: { marker: string; bytes: Buffer }[] = [
    ...markers.texts.map((m) => ({ marker: m, bytes: Buffer.from(m) })),
    // A uuid's halves too: a block of samples (docs/sample-blocks.md) spans SQLite overflow pages,
    // whose 4-byte links can cut a uuid in two; one half of 18 characters is then still whole, and
    // still unique to its sample.
    ...markers.uuids.flatMap((u) =>
      [u, u.slice(0, 18), u.slice(-18)].flatMap((part) => [
        { marker: u, bytes: Buffer.from(part.toUpperCase()) },
        { marker: u, bytes: Buffer.from(part.toLowerCase()) },
      ]),
    ),
    // A uuid as a block packs it (its 16 bytes within one base64url string, docs/sample-blocks.md):
    // where its bytes fall in the string's 3-byte groups depends on its place in the block, so each
    // of the three alignments, the characters that only its own bytes make, and their halves (an
    // overflow page's link can cut them too).
    ...markers.uuids.flatMap((u) => packedForms(u).flatMap((form) => [form, form.slice(0, form.length >> 1), form.slice(form.length >> 1)].map((part) => ({ marker: u, bytes: Buffer.from(part) })))),
    ...markers.values.flatMap((v) => [
      { marker: String(v), bytes: Buffer.from(String(v)) },
      { marker: `${v} (REAL)`, bytes: doubleBE(v) },
    ]),
  ];
  const found: { marker: string; file: string }[] = [];
  for (const file of listFiles(dir)) {
    const content = readFileSync(join(dir, file));
    for (const n of needles) if (content.includes(n.bytes)) found.push({ marker: n.marker, file });
  }
  return found;
}

/**
 * The read-model rows that still name `userId` (collection and count), read from the embedded
 * file: a leftover the scan finds is then told apart from a row some writer stored again. The
 * deletion jobs are left out: a job names its user for good (spec "Deletion job").
 */
export function liveRowsOf(dataDir: string, userId: string): { table: string; rows: number }[] {
  const db = new Database(join(dataDir, 'readmodels.sqlite'), { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rm\\_%' ESCAPE '\\'").pluck().all() as string[];
    return tables.flatMap((table) => {
      if (table === 'rm_deletion_jobs') return [];
      const hasUser = (db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).some((c) => c.name === 'f_user_id');
      const rows = hasUser ? (db.prepare(`SELECT count(*) FROM "${table}" WHERE "f_user_id" = ?`).pluck().get(userId) as number) : 0;
      return rows > 0 ? [{ table, rows }] : [];
    });
  } finally {
    db.close();
  }
}

/** The markers of `markers` that no file holds. */
export function missingFrom(dir: string, markers: Markers): string[] {
  const found = new Set(scanFiles(dir, markers).map((f) => f.marker));
  // A value is stored as a REAL column (one row per record) or as text (samples packed in blocks, docs/sample-blocks.md).
  return [...markers.texts, ...markers.uuids, ...markers.values.map(String)].filter((m) => !found.has(m) && !found.has(`${m} (REAL)`));
}
