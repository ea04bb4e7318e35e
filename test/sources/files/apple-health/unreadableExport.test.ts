import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';
import { zipEntries } from '../../../fixtures/zip/buildZip.js';
import { samsungCsv } from '../samsung-health/samsungExport.js';
import { decode, exportXml, gzip, zipOf, zipWithDamagedExportXml } from './exportFixtures.js';

/**
 * contracts §17: an unreadable file ends the same way in every format — the decoder throws
 * UnreadableExportError before any record (the upload ends `failed` with the reason), never
 * yields a lone rejection that would leave the upload `done` with nothing stored.
 */
const FIXTURE = readFileSync(fileURLToPath(new URL('../../../fixtures/apple-health/export.zip', import.meta.url)));

async function unreadable(body: Buffer): Promise<UnreadableExportError> {
  const err = await decode(body).then(
    (d) => new Error(`decoded: ${d.records.length} records, rejections ${JSON.stringify(d.rejected.map((r) => r.reason))}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UnreadableExportError);
  return err as UnreadableExportError;
}

describe('apple-health: an unreadable export fails the upload with the reason (contracts §17)', () => {
  it('the fixture export.zip cut in half is unreadable: its central directory is gone', async () => {
    const err = await unreadable(FIXTURE.subarray(0, Math.floor(FIXTURE.length / 2)));
    expect(err.message).toMatch(/not a readable zip archive/);
  });

  it('an export.zip whose export.xml cannot be read from its start is unreadable, not done with one rejection', async () => {
    const err = await unreadable(await zipWithDamagedExportXml());
    expect(err.location).toBe('apple_health_export/export.xml');
    expect(err.message).toMatch(/cannot be read|could not be read/);
  });

  it('a gzip of export.zip cut short is unreadable: the zip cannot be read without its end', async () => {
    const gz = gzip(FIXTURE);
    const err = await unreadable(gz.subarray(0, Math.floor(gz.length / 2)));
    expect(err.message).toMatch(/the gzip stream could not be read whole/);
  });

  it('a zip of unrelated files is unreadable, naming what it holds', async () => {
    const err = await unreadable(await zipOf({ 'photos/beach.jpg': Buffer.alloc(2000, 7), 'notes.txt': 'hello' }));
    expect(err.message).toMatch(/not an Apple Health export: the archive holds no export\.xml; it holds photos\/beach\.jpg, notes\.txt/);
  });

  it('a zip whose only XML document is not <HealthData> is unreadable', async () => {
    const err = await unreadable(await zipOf({ 'feed/news.xml': '<?xml version="1.0"?>\n<rss version="2.0"><channel><item/></channel></rss>' }));
    expect(err.location).toBe('feed/news.xml');
    expect(err.message).toMatch(/root is <rss>, not an Apple Health export/);
  });

  it('a Samsung Health export sent as apple-health is unreadable', async () => {
    const samsung = await zipEntries([samsungCsv('com.samsung.health.weight', ['weight', 'start_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], [[70.5, '2025-01-01 08:00:00.000', 'UTC+0100', 'd1', 'com.sec.android.app.shealth', 'u1']])]);
    const err = await unreadable(samsung);
    expect(err.message).toMatch(/the archive holds no export\.xml; it holds samsunghealth_someone_\d+\/com\.samsung\.health\.weight/);
  });

  it('a readable export still decodes whole, and an export.xml with no records is a readable, empty export', async () => {
    expect((await decode(FIXTURE)).records.length).toBeGreaterThan(1000);
    const empty = await decode(await zipOf({ 'apple_health_export/export.xml': exportXml('') }));
    expect(empty.records).toEqual([]);
    expect(empty.rejected).toEqual([]);
  });
});
