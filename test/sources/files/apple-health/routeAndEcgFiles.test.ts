import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ecgObject } from '../../../../src/sources/files/apple-health/ecgCsv.js';
import { readGpx } from '../../../../src/sources/files/apple-health/gpxRoute.js';

/** Contracts §13: workout-routes/*.gpx become routes, electrocardiograms/*.csv ECG recordings; issue 21 bounded memory. */

const pt = (i: number) => `<trkpt lat="52.${i}" lon="13.${i}"><ele>30</ele><time>2024-05-01T06:00:0${i}Z</time></trkpt>`;

describe('apple-health: route files', () => {
  it('reads at most the points the workout has room for, and says it cut', async () => {
    const gpx = `<gpx version="1.1"><trk><trkseg>${[1, 2, 3, 4, 5].map(pt).join('')}</trkseg></trk></gpx>`;
    const r = await readGpx(Readable.from([Buffer.from(gpx)]), 3);
    expect(r.points.map((p) => p.latitude)).toEqual([52.1, 52.2, 52.3]);
    expect(r.truncated).toBe(true);
    expect(r.error).toBeNull();
  });

  it('skips points without a time and reads prefixed element names', async () => {
    const gpx = `<g:gpx xmlns:g="http://www.topografix.com/GPX/1/1"><g:trk><g:trkseg><g:trkpt lat="1" lon="2"><g:ele>5</g:ele></g:trkpt>${pt(1).replace(/<(\/?)/g, '<$1g:')}</g:trkseg></g:trk></g:gpx>`;
    const r = await readGpx(Readable.from([Buffer.from(gpx)]), 10);
    expect(r.points).toEqual([{ latitude: 52.1, longitude: 13.1, altitude: 30, timestamp: '2024-05-01T06:00:01Z' }]);
  });
});

describe('apple-health: ECG files', () => {
  it('reads the header by the shape of its values in another language, never keeping name or birth date', () => {
    const csv = 'Name,Erika Muster\nGeburtsdatum,01.01.1970\nAufzeichnungsdatum,2024-05-01 09:00:00 +0200\nKlassifizierung,Sinusrhythmus\nGerät,"Watch6,2"\nMessrate,512 Hertz\nEinheit,µV\n\n1,5\n-2,25\n3\n';
    const o = ecgObject(csv, 'ecg.csv');
    expect(o).toMatchObject({ start_date: '2024-05-01 09:00:00 +0200', end_date: '2024-05-01T07:00:00.006Z', product_type: 'Watch6,2', voltages: [1.5, -2.25, 3], voltage_unit: 'mcV', sampling_frequency: { value: 512, unit: 'Hz' } });
    expect(JSON.stringify(o)).not.toMatch(/Erika|1970/);
  });
});
