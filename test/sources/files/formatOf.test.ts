import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bufferByteSource } from '../../../src/sources/files/exportShared/byteSources.js';
import { formatOf } from '../../../src/sources/files/formatOf.js';
import { buildHealthConnectZip } from '../../fixtures/health-connect/buildHealthConnectExport.js';
import { zipEntries } from '../../fixtures/zip/buildZip.js';
import { exportXml, zipOf } from './apple-health/exportFixtures.js';
import { samsungCsv } from './samsung-health/samsungExport.js';

/**
 * Issue 36 (the CLI tells the format from the file, `--provider` optional): an export's import
 * slug from its first bytes and its zip entries' names, the names each format's own decoder
 * reads; anything else is "cannot tell", with why.
 */
const APPLE_ZIP = readFileSync(fileURLToPath(new URL('../../fixtures/apple-health/export.zip', import.meta.url)));
const of = (body: Buffer) => formatOf(bufferByteSource(body));

const samsungZip = () =>
  zipEntries([samsungCsv('com.samsung.health.weight', ['weight', 'start_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], [[70.5, '2025-01-01 08:00:00.000', 'UTC+0100', 'd1', 'com.sec.android.app.shealth', 'u1']])]);
const fitbitZip = () =>
  zipEntries([{ name: 'Takeout/Fitbit/Global Export Data/heart_rate-2024-07-01.json', data: Buffer.from('[{"dateTime":"07/01/24 08:00:00","value":{"bpm":61,"confidence":2}}]') }]);

describe('the format of an export, told from the file (issue 36)', () => {
  it('tells each fixture format: the Apple export.zip (and export.xml, gzip of either), Health Connect, Samsung Health, Fitbit Takeout', async () => {
    expect(await of(APPLE_ZIP)).toEqual({ slug: 'apple-health' });
    const xml = Buffer.from(exportXml(''));
    expect(await of(xml)).toEqual({ slug: 'apple-health' });
    expect(await of(gzipSync(xml))).toEqual({ slug: 'apple-health' });
    expect(await of(gzipSync(APPLE_ZIP))).toEqual({ slug: 'apple-health' });
    expect(await of(await buildHealthConnectZip())).toEqual({ slug: 'health-connect' });
    expect(await of(await samsungZip())).toEqual({ slug: 'samsung-health' });
    expect(await of(await fitbitZip())).toEqual({ slug: 'fitbit-takeout' });
  });

  it('tells a Dexcom Clarity CSV export by its header row, quoted or not, after a byte order mark (contracts §17)', async () => {
    const header = 'Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,Device Info,Source Device ID,Glucose Value (mg/dL)\n';
    expect(await of(Buffer.from(header))).toEqual({ slug: 'dexcom-clarity' });
    expect(await of(Buffer.from(`\uFEFF${header.split(',').map((c) => `"${c.trim()}"`).join(',')}\n`))).toEqual({ slug: 'dexcom-clarity' });
  });

  it('cannot tell an empty file, text, a zip of unrelated files, a cut zip or a zip holding two formats, and says why', async () => {
    expect(await of(Buffer.alloc(0))).toEqual({ unknown: 'the file is empty' });
    expect(await of(Buffer.from('date,steps\n2024-01-01,100\n'))).toMatchObject({ unknown: expect.stringMatching(/not a zip archive, a FIT file, a Dexcom Clarity CSV export or an Apple Health export\.xml/) });
    expect(await of(await zipOf({ 'photos/beach.jpg': Buffer.alloc(100, 1) }))).toMatchObject({ unknown: expect.stringMatching(/holds none of the files .*; it holds photos\/beach\.jpg/) });
    expect(await of(APPLE_ZIP.subarray(0, APPLE_ZIP.length >> 1))).toMatchObject({ unknown: expect.stringMatching(/not a readable zip archive/) });
    const both = await zipOf({ 'apple_health_export/export.xml': exportXml(''), 'Takeout/Fitbit/Global Export Data/steps-2024-07-01.json': '[]' });
    expect(await of(both)).toEqual({ unknown: 'the zip archive holds the files of several formats (apple-health, fitbit-takeout)' });
  });
});
