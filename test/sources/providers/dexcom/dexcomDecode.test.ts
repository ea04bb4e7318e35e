import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuantityRecord } from '../../../../commands/ingestion/records.js';
import { DEXCOM_HISTORY_DAYS } from '../../../../src/sandbox/data/dexcom.js';
import type { Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { dexcomConnector, DEXCOM_MAX_SPAN_MS } from '../../../../src/sources/providers/dexcom/pull.js';
import { decode, grantedSandbox, parseAll, runPull } from '../../shared/sandboxPull.js';

/**
 * Dexcom API v3 (issue 22, docs/connectors/dexcom.md): EGVs and calibrations as blood_glucose in
 * the catalog's mg/dL with what was sent kept, carbs as dietary_carbohydrates, what the catalog
 * has no home for decoded to nothing, bad records rejected alone; the pull asks only within
 * dataRange, in windows of at most 30 days.
 */
const egv = (over: Record<string, unknown> = {}) => ({
  recordId: 'e1',
  systemTime: '2026-10-25T00:30:00+00:00',
  displayTime: '2026-10-25T02:30:00+02:00',
  transmitterId: 'abc',
  transmitterTicks: 1,
  value: 112,
  trend: 'flat',
  trendRate: 0.1,
  unit: 'mg/dL',
  rateUnit: 'mg/dL/min',
  displayDevice: 'iOS',
  transmitterGeneration: 'g7',
  status: null,
  ...over,
});
const records = (body: unknown[]) => ({ recordType: 'egv', recordVersion: '3.0', userId: 'u', records: body });

describe('Dexcom decoding', () => {
  it('an EGV is a blood_glucose sample at systemTime in mg/dL, the value and unit as sent kept, the local offset from displayTime, the device named by its generation', async () => {
    const { records: out, rejected } = await decode(dexcomConnector, 'egvs', records([egv()]));
    expect(rejected).toEqual([]);
    const s = out[0] as QuantityRecord;
    expect(s).toMatchObject({ kind: 'quantity', type: 'blood_glucose', value: 112, unit: 'mg/dL', start_date: '2026-10-25T00:30:00.000Z', end_date: '2026-10-25T00:30:00.000Z', device: 'Dexcom G7', was_user_entered: false });
    expect(s.metadata).toMatchObject({ original_value: 112, original_unit: 'mg/dL', timezone: '+02:00', trend: 'flat', record_type: 'egv' });
  });

  it('an EGV in mmol/L is stored in mg/dL through glucose molar mass, 6.2 mmol/L kept as sent', async () => {
    const { records: out } = await decode(dexcomConnector, 'egvs', records([egv({ value: 6.2, unit: 'mmol/L', rateUnit: 'mmol/L/min' })]));
    const s = out[0] as QuantityRecord;
    expect(s.unit).toBe('mg/dL');
    expect(s.value).toBeCloseTo(6.2 * 18.0156, 6);
    expect(s.metadata).toMatchObject({ original_value: 6.2, original_unit: 'mmol/L' });
  });

  it('a receiver record without offsets is read as UTC; an EGV without a value is no sample; an unknown unit or a missing time is rejected alone', async () => {
    const { records: out, rejected } = await decode(
      dexcomConnector,
      'egvs',
      records([egv({ recordId: 'r', systemTime: '2026-10-25T00:30:00', displayTime: '2026-10-25T01:30:00', displayDevice: 'receiver' }), egv({ recordId: 'n', value: null }), egv({ recordId: 'x', unit: 'unknown' }), egv({ recordId: 'y', systemTime: undefined })]),
    );
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ start_date: '2026-10-25T00:30:00.000Z', metadata: { timezone: '+01:00' } });
    expect(rejected.map((r) => r.location)).toEqual(['record 3', 'record 4']);
  });

  it('a calibration is a blood_glucose sample the user entered', async () => {
    const { records: out } = await decode(dexcomConnector, 'calibrations', { recordType: 'calibration', records: [{ recordId: 'c1', systemTime: '2026-10-25T06:00:00+00:00', displayTime: '2026-10-25T07:00:00+01:00', value: 98, unit: 'mg/dL' }] });
    expect(out[0]).toMatchObject({ type: 'blood_glucose', value: 98, was_user_entered: true, external_id: 'calibration:c1' });
  });

  it('carbs events are dietary_carbohydrates in grams entered by the user; insulin, exercise and deleted events decode to nothing', async () => {
    const at = { systemTime: '2026-10-25T11:30:00+00:00', displayTime: '2026-10-25T12:30:00+01:00' };
    const { records: out, rejected } = await decode(dexcomConnector, 'events', {
      recordType: 'event',
      records: [
        { recordId: 'k', ...at, eventStatus: 'created', eventType: 'carbs', value: 45, unit: 'grams' },
        { recordId: 'i', ...at, eventStatus: 'created', eventType: 'insulin', eventSubType: 'fastActing', value: 4, unit: 'units' },
        { recordId: 'x', ...at, eventStatus: 'created', eventType: 'exercise', value: 30, unit: 'minutes' },
        { recordId: 'd', ...at, eventStatus: 'deleted', eventType: 'carbs', value: 20, unit: 'grams' },
      ],
    });
    expect(rejected).toEqual([]);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ type: 'dietary_carbohydrates', value: 45, unit: 'g', was_user_entered: true, start_date: '2026-10-25T11:30:00.000Z' });
  });

  it('dataRange and devices hold no records and are not errors', async () => {
    expect(await decode(dexcomConnector, 'dataRange', { recordType: 'dataRange', egvs: {} })).toMatchObject({ records: [], rejected: [] });
    expect(await decode(dexcomConnector, 'devices', { recordType: 'device', records: [{ transmitterGeneration: 'g7' }] })).toMatchObject({ records: [], rejected: [] });
  });
});

describe('Dexcom pull against the sandbox', () => {
  const NOW = new Date('2026-11-20T12:00:00Z');
  let sandbox: Sandbox;
  let token: string;
  beforeAll(async () => ({ sandbox, token } = await grantedSandbox(dexcomConnector, NOW)));
  afterAll(async () => sandbox.close());

  it('a 90-day backfill asks egvs only from the first record dataRange names, in windows of at most 30 days, and stores dataRange and devices', async () => {
    const window = { start: new Date(NOW.getTime() - 90 * 86_400_000), end: NOW };
    const { payloads } = await runPull(sandbox, dexcomConnector, { accessToken: token, window });
    const egvRefs = payloads.filter((p) => p.dataType === 'egvs').map((p) => new URLSearchParams(p.ref.split('?')[1]));
    expect(egvRefs.length).toBe(1);
    const [q] = egvRefs;
    expect(Date.parse(`${q!.get('endDate')}Z`) - Date.parse(`${q!.get('startDate')}Z`)).toBeLessThanOrEqual(DEXCOM_MAX_SPAN_MS);
    expect(Date.parse(`${q!.get('startDate')}Z`)).toBeGreaterThanOrEqual(NOW.getTime() - (DEXCOM_HISTORY_DAYS + 1) * 86_400_000);
    expect(payloads.map((p) => p.dataType)).toEqual(expect.arrayContaining(['dataRange', 'egvs', 'events', 'devices']));
    const { records: out, rejected } = await parseAll(dexcomConnector, payloads, NOW.toISOString());
    expect(rejected).toEqual([]);
    const glucose = out.filter((r) => r.kind === 'quantity' && r.type === 'blood_glucose');
    // A reading every five minutes of the sensor's days, the first and last included.
    expect(glucose).toHaveLength(DEXCOM_HISTORY_DAYS * 288 + 1);
  });

  it('a notification-sized window pulls only that window', async () => {
    const window = { start: new Date(NOW.getTime() - 3 * 3_600_000), end: NOW };
    const { payloads } = await runPull(sandbox, dexcomConnector, { accessToken: token, window, dataType: 'egvs' });
    const { records: out } = await parseAll(dexcomConnector, payloads, NOW.toISOString());
    // Readings stop an hour before now (Dexcom's delay): two hours of them, both ends included.
    expect(out).toHaveLength(25);
  });
});
