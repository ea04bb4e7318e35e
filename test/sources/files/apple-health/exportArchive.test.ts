import { describe, expect, it } from 'vitest';
import { sniffAppleHealth } from '../../../../src/sources/files/apple-health/sniff.js';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';
import { decode, exportXml, gzip, ofKind, zipOf } from './exportFixtures.js';

/** Contracts §13 (apple-health: export.zip or export.xml, optionally gzip; routes, ECGs, export_cda.xml ignored) and §12 (422 from the first bytes). */

const DIR = 'apple_health_export';
const t = (hms: string) => `2024-05-01 ${hms} +0200`;

const workout = (routes: string[]) => ` <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="20" durationUnit="min" sourceName="Test Watch" sourceVersion="10.4" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.4&gt;" creationDate="${t('08:21:00')}" startDate="${t('08:00:00')}" endDate="${t('08:20:00')}">
  <MetadataEntry key="HKTimeZone" value="Europe/Berlin"/>
  <WorkoutStatistics type="HKQuantityTypeIdentifierDistanceWalkingRunning" startDate="${t('08:00:00')}" endDate="${t('08:20:00')}" sum="4.1" unit="km"/>
${routes
  .map(
    (r) => `  <WorkoutRoute sourceName="Test Watch" sourceVersion="10.4" creationDate="${t('08:21:00')}" startDate="${t('08:00:00')}" endDate="${t('08:20:00')}">
   <MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>
   <FileReference path="/workout-routes/${r}"/>
  </WorkoutRoute>`,
  )
  .join('\n')}
 </Workout>`;

function gpx(points: [lat: number, lon: number, time: string][], opts: { python?: boolean } = {}): string {
  const pts = points
    .map(([lat, lon, time]) =>
      opts.python
        ? `<trkpt lat='${lat}' lon='${lon}'><ele>31.5</ele><time>${time}</time><extensions><speed>2.5</speed><course>-1</course><hAcc>3.1</hAcc><vAcc>2.2</vAcc></extensions></trkpt>`
        : `<trkpt lon="${lon}" lat="${lat}"><ele>31.5</ele><time>${time}</time><extensions><speed>2.5</speed><course>90.5</course><hAcc>3.1</hAcc><vAcc>2.2</vAcc></extensions></trkpt>`,
    )
    .join('\n      ');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1">\n  <metadata><time>2024-05-02T10:00:00Z</time></metadata>\n  <trk><name>Route</name><trkseg>\n      ${pts}\n  </trkseg></trk>\n</gpx>\n`;
}

const ECG = `Name,Test Person
Date of Birth,"Jan 1, 1970"
Recorded Date,2024-05-01 09:00:00 +0200
Classification,Sinus Rhythm
Symptoms,
Software Version,2.0
Device,"Watch6,2"
Sample Rate,512 hertz
Lead,Lead I
Unit,µV

${Array.from({ length: 1024 }, (_, i) => (Math.sin(i / 10) * 300).toFixed(3)).join('\n')}
`;

describe('apple-health: export.zip read entry by entry (contracts §13)', () => {
  it('reads export.xml, routes split over several GPX files, ECG CSVs, and ignores export_cda.xml', async () => {
    const zip = await zipOf({
      [`${DIR}/export.xml`]: exportXml(workout(['route_b.gpx', 'route_a.gpx'])),
      [`${DIR}/export_cda.xml`]: '<?xml version="1.0"?><ClinicalDocument><Record type="HKQuantityTypeIdentifierHeartRate"/></ClinicalDocument>',
      [`${DIR}/workout-routes/route_a.gpx`]: gpx([
        [52.5, 13.4, '2024-05-01T06:00:01Z'],
        [52.5001, 13.4001, '2024-05-01T06:00:02Z'],
      ]),
      [`${DIR}/workout-routes/route_b.gpx`]: gpx([[52.6, 13.5, '2024-05-01T06:10:00Z']], { python: true }),
      [`${DIR}/electrocardiograms/ecg_2024-05-01.csv`]: ECG,
    });
    const { records, rejected } = await decode(zip);
    expect(rejected).toEqual([]);
    const [w] = ofKind(records, 'workout');
    expect(w).toMatchObject({ type: 'running', duration_s: 1200, distance_m: 4100, start_date: '2024-05-01T06:00:00.000Z', source: 'apple', body_worn: true });
    expect(w!.metadata).toMatchObject({ timezone: 'Europe/Berlin', route_files: 2 });
    expect(w!.route.map((p) => [p.timestamp, p.latitude])).toEqual([
      ['2024-05-01T06:00:01.000Z', 52.5],
      ['2024-05-01T06:00:02.000Z', 52.5001],
      ['2024-05-01T06:10:00.000Z', 52.6],
    ]);
    expect(w!.route[0]).toMatchObject({ altitude_m: 31.5, speed_mps: 2.5, course_deg: 90.5, horizontal_accuracy_m: 3.1 });
    // CLLocation's -1 for an unknown course is stored as null (device-a's rule).
    expect(w!.route[2]!.course_deg).toBeNull();
    const [ecg] = ofKind(records, 'ecg');
    expect(ecg).toMatchObject({ classification: 'sinusRhythm', classification_value: 1, sampling_frequency_hz: 512, number_of_measurements: 1024, start_date: '2024-05-01T07:00:00.000Z', end_date: '2024-05-01T07:00:02.000Z', device: 'Watch (Watch6,2)', body_worn: true, source: 'apple' });
    expect(ecg!.voltages[10]).toBeCloseTo(Math.sin(1) * 300, 2);
    // The name and date of birth in the CSV header never reach the record.
    expect(JSON.stringify(ecg)).not.toMatch(/Test Person|1970/);
    expect(records.map((r) => r.kind)).toEqual(['workout', 'ecg']);
  });

  it('a route file the archive lacks, or a bare export.xml, leaves the workout without those points and says which', async () => {
    const zip = await zipOf({ [`${DIR}/export.xml`]: exportXml(workout(['route_missing.gpx'])) });
    const [w] = ofKind((await decode(zip)).records, 'workout');
    expect(w!.route).toEqual([]);
    expect(w!.metadata.route_files_missing).toEqual(['/workout-routes/route_missing.gpx']);
    const [bare] = ofKind((await decode(exportXml(workout(['route_a.gpx'])))).records, 'workout');
    expect(bare!.metadata.route_files_missing).toEqual(['/workout-routes/route_a.gpx']);
  });

  it('a damaged route file keeps the points before the damage and marks the workout', async () => {
    const good = gpx([[52.5, 13.4, '2024-05-01T06:00:01Z']]);
    const zip = await zipOf({ [`${DIR}/export.xml`]: exportXml(workout(['route_a.gpx'])), [`${DIR}/workout-routes/route_a.gpx`]: good.slice(0, good.indexOf('</trkseg>')) + '<trkpt lat="1" lon="2"><time>2024' });
    const [w] = ofKind((await decode(zip)).records, 'workout');
    expect(w!.route).toHaveLength(1);
    expect(w!.metadata.route_files_damaged).toEqual(['/workout-routes/route_a.gpx']);
  });

  it('zip, stored zip, gzip of the zip, bare export.xml and gzip of it give the same records', async () => {
    const xml = exportXml(` <Record type="HKQuantityTypeIdentifierStepCount" sourceName="P" unit="count" startDate="${t('08:00:00')}" endDate="${t('08:10:00')}" value="100"/>`);
    const zip = await zipOf({ [`${DIR}/export.xml`]: xml });
    const bodies = [zip, await zipOf({ [`${DIR}/export.xml`]: xml }, { compress: false }), gzip(zip), Buffer.from(xml), gzip(xml)];
    const results = await Promise.all(bodies.map((b) => decode(b)));
    for (const r of results) {
      expect(r.rejected).toEqual([]);
      expect(r.records).toEqual(results[0]!.records);
    }
    expect(results[0]!.records).toHaveLength(1);
  });

  it('an archive without export.xml is unreadable (contracts §17); a damaged ECG file and a cut gzip stream are rejected with where and why', async () => {
    await expect(decode(await zipOf({ [`${DIR}/export_cda.xml`]: '<ClinicalDocument/>' }))).rejects.toThrow(/the archive holds no export\.xml; it holds apple_health_export\/export_cda\.xml/);
    const badEcg = await decode(await zipOf({ [`${DIR}/export.xml`]: exportXml(''), [`${DIR}/electrocardiograms/ecg_1.csv`]: 'Name,X\nSample Rate,512 hertz\n\n1\n2\n' }));
    expect(badEcg.rejected.map((r) => [r.location, r.reason])).toEqual([[`${DIR}/electrocardiograms/ecg_1.csv`, 'no recorded date with a time zone in the header']]);
    const xml = exportXml(Array.from({ length: 2000 }, (_, i) => ` <Record type="HKQuantityTypeIdentifierStepCount" sourceName="P" unit="count" startDate="${t('08:00:00')}" endDate="${t('08:10:00')}" value="${i}"/>`).join('\n'));
    const gz = gzip(xml);
    const cut = await decode(gz.subarray(0, Math.floor(gz.length / 2)));
    expect(ofKind(cut.records, 'quantity').length).toBeGreaterThan(100);
    expect(cut.rejected[cut.rejected.length - 1]!.reason).toMatch(/^the document could not be read on after this line: unexpected end of file/);
  });
});

describe('apple-health: bounds a stranger cannot move (helper brief: hostile input)', () => {
  it('a gzip holding a "zip" far larger than itself is refused, not decompressed to disk without end', async () => {
    const bomb = gzip(Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(70 * 2 ** 20)]));
    const err = await decode(bomb).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnreadableExportError);
    expect([(err as UnreadableExportError).location, (err as UnreadableExportError).message]).toEqual(['export.zip', `the gzip stream could not be read whole: decompresses to more than ${64 * 2 ** 20} bytes`]);
  });
});

describe('apple-health: sniffing the first bytes (contracts §12: 422)', () => {
  it('accepts a zip, a gzip of export.xml or of a zip, and export.xml with or without BOM and declaration', async () => {
    const xml = exportXml('');
    for (const head of [await zipOf({ 'a/export.xml': xml }), gzip(xml), gzip(await zipOf({ 'a/export.xml': xml })), Buffer.from(xml), Buffer.from(`\uFEFF${xml}`), Buffer.from('<HealthData locale="de_DE">')]) {
      expect(sniffAppleHealth(head.subarray(0, 4096))).toBeNull();
    }
  });

  it('refuses bodies that cannot be an Apple Health export, saying why', () => {
    expect(sniffAppleHealth(Buffer.alloc(0))).toBe('the body is empty');
    expect(sniffAppleHealth(Buffer.from('{"data":[]}'))).toBe('the body is not a zip archive, gzip or an XML document');
    expect(sniffAppleHealth(Buffer.from('<?xml version="1.0"?>\n<gpx version="1.1">'))).toBe('an XML document whose root is <gpx>, not an Apple Health export (<HealthData>)');
    expect(sniffAppleHealth(Buffer.from('<?xml version="1.0"?><!DOCTYPE ClinicalDocument>'))).toBe('an XML document of type ClinicalDocument, not an Apple Health export (<HealthData>)');
    expect(sniffAppleHealth(gzip('hello'))).toBe('the body is not a zip archive, gzip or an XML document');
    expect(sniffAppleHealth(Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))).toMatch(/^the body is not a readable gzip stream/);
  });
});
