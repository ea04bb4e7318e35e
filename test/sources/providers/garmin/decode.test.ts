import { describe, expect, it } from 'vitest';
import type { NormalizedRecord, ParseItem, QuantityRecord, SleepSessionRecord, WorkoutRecord, DailySummaryRecord } from '../../../../commands/ingestion/records.js';
import { garminParser } from '../../../../src/sources/providers/garmin/parser.js';
import { MAX_NOTIFICATION_ITEMS, NotificationSplitter, NotificationTooLarge, splitNotification } from '../../../../src/sources/providers/garmin/receive.js';
import { SUMMARY_TYPES, type SummaryType } from '../../../../src/sources/providers/garmin/vocabulary.js';
import { garminNotification } from '../../../../src/sandbox/data/garmin.js';

/**
 * Garmin Health API decoding (issue 11 "Connectors for real providers"; docs/connectors/garmin.md):
 * every summary type Garmin pushes maps onto the record kinds, with Garmin's quirks (grams, local
 * offsets in seconds, RMSSD, tentative nights, one workout for an activity and its details).
 */
const USER = '5a1d7c2e-93f1-4c1a-a0b2-1f6e2d3c4b5a';
const WINDOW = { start: new Date('2026-03-27T00:00:00Z'), end: new Date('2026-03-31T00:00:00Z') }; // DST change on 29 March in Berlin

async function parse(type: string, body: unknown): Promise<ParseItem[]> {
  const out: ParseItem[] = [];
  for await (const item of garminParser.parse(Buffer.from(JSON.stringify(body)), { provider: 'garmin', receivedAt: '2026-04-01T00:00:00.000Z', dataType: type })) out.push(item);
  return out;
}
const records = (items: ParseItem[]) => items.flatMap((i) => ('record' in i ? [i.record] : []));
const rejections = (items: ParseItem[]) => items.flatMap((i) => ('rejected' in i ? [i.rejected] : []));
const ofKind = <K extends NormalizedRecord['kind']>(rs: NormalizedRecord[], kind: K) => rs.filter((r): r is Extract<NormalizedRecord, { kind: K }> => r.kind === kind);

describe('Garmin decoders', () => {
  it('decodes every summary type of a realistic push without rejecting anything; provenance is garmin, body-worn but for the scale', async () => {
    for (const type of SUMMARY_TYPES) {
      const items = await parse(type, garminNotification(USER, type, WINDOW));
      expect(rejections(items), type).toEqual([]);
      for (const r of records(items)) {
        expect(r.provider, type).toBe('garmin');
        expect(r.source, type).toBe('garmin');
        expect(r.body_worn, type).toBe(type !== 'bodyComps');
      }
      if (type !== 'stressDetails') expect(records(items).length, type).toBeGreaterThan(0);
    }
  });

  it('dailies: one daily summary per calendar date, resting heart rate, heart-rate samples at start + offset with the local offset as timezone (DST)', async () => {
    const rs = records(await parse('dailies', garminNotification(USER, 'dailies', WINDOW)));
    const days = ofKind(rs, 'daily_summary') as DailySummaryRecord[];
    expect(days.map((d) => d.date)).toEqual(['2026-03-27', '2026-03-28', '2026-03-29', '2026-03-30']);
    expect(days[0]!.external_id).toBe('dailies:2026-03-27');
    expect(days[0]!.metadata.timezone).toBe('+01:00');
    expect(days[3]!.metadata.timezone).toBe('+02:00');
    const hr = (rs as QuantityRecord[]).filter((r) => r.type === 'heart_rate');
    expect(hr.length).toBeGreaterThan(90 * 4 - 8);
    expect(hr[0]!.start_date).toBe('2026-03-26T23:00:00.000Z');
    expect(hr[0]!.unit).toBe('count/min');
    expect((rs as QuantityRecord[]).filter((r) => r.type === 'resting_heart_rate')).toHaveLength(4);
  });

  it('dailies: a re-send of the same day (new totals) names the same records; a sample out of range is rejected alone', async () => {
    const day = { userId: USER, summaryId: 'x1', calendarDate: '2026-05-02', startTimeInSeconds: 1777672800, startTimeOffsetInSeconds: 7200, durationInSeconds: 86400, steps: 1200, timeOffsetHeartRateSamples: { '0': 61, '15': 400, '30': 62 } };
    const first = await parse('dailies', { dailies: [day] });
    const again = await parse('dailies', { dailies: [{ ...day, summaryId: 'x2', steps: 5400 }] });
    expect(records(first).map((r) => r.external_id)).toEqual(records(again).map((r) => r.external_id));
    expect((records(again)[0] as DailySummaryRecord).steps).toBe(5400);
    expect(rejections(first)).toHaveLength(1);
    expect(rejections(first)[0]!.reason).toMatch(/timeOffsetHeartRateSamples\[15\]/);
    expect(rejections(first)[0]!.location).toBe('dailies[0]');
  });

  it('epochs: steps, active energy and distance per 15-minute slice; nothing for an empty slice', async () => {
    const rs = records(await parse('epochs', { epochs: [
      { userId: USER, summaryId: 'e1', activityType: 'WALKING', steps: 820, activeKilocalories: 36.9, distanceInMeters: 623.2, durationInSeconds: 900, startTimeInSeconds: 1777708800, startTimeOffsetInSeconds: 7200 },
      { userId: USER, summaryId: 'e2', activityType: 'SEDENTARY', steps: 0, activeKilocalories: 0, distanceInMeters: 0, durationInSeconds: 900, startTimeInSeconds: 1777708800, startTimeOffsetInSeconds: 7200 },
    ] })) as QuantityRecord[];
    expect(rs.map((r) => [r.type, r.value, r.unit])).toEqual([['step_count', 820, 'count'], ['active_energy_burned', 36.9, 'kcal'], ['distance', 623.2, 'm']]);
    expect(rs[0]!.end_date).toBe('2026-05-02T08:15:00.000Z');
  });

  it('sleeps: stage totals, phases from sleepLevelsMap in time order, SpO2 and breathing means, score; a tentative night is in progress', async () => {
    const rs = records(await parse('sleeps', garminNotification(USER, 'sleeps', WINDOW))) as SleepSessionRecord[];
    expect(rs).toHaveLength(4);
    const s = rs[0]!;
    expect(s.total_sleep_seconds).toBe(s.deep_sleep_seconds + s.light_sleep_seconds + s.rem_sleep_seconds);
    expect(s.phases.length).toBe(25);
    expect(s.phases.map((p) => p.start_date)).toEqual([...s.phases.map((p) => p.start_date)].sort());
    expect(s.spo2_avg).toBeGreaterThan(90);
    expect(s.respiratory_rate).toBeGreaterThan(10);
    expect(s.sleep_score).toBeGreaterThan(60);
    expect(s.metadata.sleepLevelsMap).toBeUndefined();

    const tentative = records(await parse('sleeps', { sleeps: [{ userId: USER, summaryId: 's1', startTimeInSeconds: 1777672800, startTimeOffsetInSeconds: 7200, durationInSeconds: 27000, deepSleepDurationInSeconds: 5400, lightSleepDurationInSeconds: 14000, remSleepInSeconds: 6000, awakeDurationInSeconds: 1600, validation: 'ENHANCED_TENTATIVE' }] }));
    expect(tentative[0]!.metadata.in_progress).toBe(true);
    expect((tentative[0] as SleepSessionRecord).total_sleep_seconds).toBe(25400);
    const bad = await parse('sleeps', { sleeps: [{ userId: USER, summaryId: 's2', startTimeInSeconds: 1777672800, durationInSeconds: 27000, sleepLevelsMap: { snoring: [] } }] });
    expect(rejections(bad)[0]!.reason).toMatch(/unknown level/);
  });

  it('activities and activityDetails name one workout (activity id); details add the route; types map through the vocabulary', async () => {
    const summaries = records(await parse('activities', garminNotification(USER, 'activities', WINDOW))) as WorkoutRecord[];
    const details = records(await parse('activityDetails', garminNotification(USER, 'activityDetails', WINDOW))) as WorkoutRecord[];
    expect(summaries.length).toBeGreaterThan(0);
    expect(details.map((d) => d.external_id)).toEqual(summaries.map((s) => s.external_id));
    expect(summaries[0]!.type).toBe('running');
    expect(summaries[0]!.device).toBe('Forerunner 255');
    expect(summaries[0]!.route).toEqual([]);
    expect(details[0]!.route.length).toBeGreaterThan(100);
    expect(details[0]!.route[0]).toMatchObject({ latitude: expect.any(Number), longitude: expect.any(Number), altitude_m: expect.any(Number) });
    const other = records(await parse('activities', { activities: [{ userId: USER, summaryId: '77', activityType: 'KITESURFING_V3', startTimeInSeconds: 1777708800, durationInSeconds: 600, manual: true }] })) as WorkoutRecord[];
    expect(other[0]).toMatchObject({ type: 'other', body_worn: false, external_id: 'activities:77' });
    expect(other[0]!.metadata.activityType).toBe('KITESURFING_V3');
  });

  it('bodyComps: grams to kilograms, body fat and BMI at the measurement time; a scale is not body-worn', async () => {
    const rs = records(await parse('bodyComps', { bodyComps: [{ userId: USER, summaryId: 'b1', measurementTimeInSeconds: 1777708800, measurementTimeOffsetInSeconds: 7200, weightInGrams: 74350, bodyFatInPercent: 17.4, bodyMassIndex: 22.9, muscleMassInGrams: 32000 }] })) as QuantityRecord[];
    expect(rs.map((r) => [r.type, r.value, r.unit])).toEqual([['body_mass', 74.35, 'kg'], ['body_fat_percentage', 17.4, '%'], ['body_mass_index', 22.9, 'count']]);
    expect(rs[0]!.metadata).toMatchObject({ original_value: 74350, original_unit: 'g', timezone: '+02:00', muscleMassInGrams: 32000 });
  });

  it('hrv: the nightly average is RMSSD (hrv_rmssd), never SDNN; the 5-minute values stay in metadata', async () => {
    const rs = records(await parse('hrv', garminNotification(USER, 'hrv', WINDOW))) as QuantityRecord[];
    expect(rs).toHaveLength(4);
    expect(rs.every((r) => r.type === 'hrv_rmssd' && r.unit === 'ms')).toBe(true);
    expect(Object.keys(rs[0]!.metadata.hrv_values as object).length).toBeGreaterThan(50);
  });

  it('pulseox, respiration and userMetrics: one reading per offset, VO2 max per calendar day', async () => {
    const spo2 = records(await parse('pulseox', garminNotification(USER, 'pulseox', WINDOW))) as QuantityRecord[];
    expect(spo2.every((r) => r.type === 'oxygen_saturation' && r.unit === '%' && r.value >= 90)).toBe(true);
    const resp = records(await parse('respiration', garminNotification(USER, 'respiration', WINDOW))) as QuantityRecord[];
    expect(resp.every((r) => r.type === 'respiratory_rate' && r.unit === 'count/min')).toBe(true);
    const vo2 = records(await parse('userMetrics', garminNotification(USER, 'userMetrics', WINDOW))) as QuantityRecord[];
    expect(vo2[0]).toMatchObject({ type: 'vo2_max', start_date: '2026-03-27T00:00:00.000Z', end_date: '2026-03-28T00:00:00.000Z' });
  });

  it('the same window decodes to the same external ids every time (idempotent re-push)', async () => {
    for (const type of ['dailies', 'sleeps', 'activityDetails', 'hrv'] as SummaryType[]) {
      const a = records(await parse(type, garminNotification(USER, type, WINDOW))).map((r) => r.external_id);
      const b = records(await parse(type, garminNotification(USER, type, WINDOW))).map((r) => r.external_id);
      expect(a, type).toEqual(b);
      expect(new Set(a).size, type).toBe(a.length);
    }
  });

  it('rejects a summary without its times and a payload that is not JSON, keeping the rest', async () => {
    const items = await parse('dailies', { dailies: [{ userId: USER, summaryId: 'bad', calendarDate: '2026-02-30' }, ...garminNotification(USER, 'dailies', { start: new Date('2026-05-02T00:00:00Z'), end: new Date('2026-05-03T00:00:00Z') }).dailies!] });
    expect(rejections(items)).toHaveLength(1);
    expect(rejections(items)[0]!.location).toBe('dailies[0]');
    expect(records(items).length).toBeGreaterThan(1);
    const out: ParseItem[] = [];
    for await (const i of garminParser.parse(Buffer.from('{nope'), { provider: 'garmin', receivedAt: '2026-04-01T00:00:00.000Z', dataType: 'dailies' })) out.push(i);
    expect(rejections(out)[0]!.reason).toMatch(/not JSON/);
  });
});

describe('Garmin receive', () => {
  it('splits one push into one payload per user and summary type, summaries unchanged', () => {
    const other = 'a0000000-0000-4000-a000-000000000001';
    const body = {
      dailies: [...garminNotification(USER, 'dailies', WINDOW).dailies!, ...garminNotification(other, 'dailies', WINDOW).dailies!],
      sleeps: garminNotification(USER, 'sleeps', WINDOW).sleeps,
    };
    const { payloads, pings, accountChanges } = splitNotification(Buffer.from(JSON.stringify(body)));
    expect(payloads.map((p) => [p.dataType, p.providerUserId])).toEqual([['dailies', USER], ['dailies', other], ['sleeps', USER]]);
    expect(JSON.parse(payloads[0]!.body.toString()).dailies).toEqual(garminNotification(USER, 'dailies', WINDOW).dailies);
    expect(pings).toBe(0);
    expect(accountChanges).toEqual([]);
  });

  it('splits the same whatever pieces the body arrives in: byte by byte, a character cut in two, as one write (issue 20: parsed while it arrives)', () => {
    const other = 'a0000000-0000-4000-a000-000000000001';
    const body = Buffer.from(
      JSON.stringify({ note: { ignored: [1, 2] }, dailies: [{ userId: USER, calendarDate: '2026-03-27', label: 'Läufer ✓ 🏃' }, { userId: other, calendarDate: '2026-03-27' }], deregistrations: [{ userId: other }] }),
    );
    const whole = splitNotification(body);
    const splitter = new NotificationSplitter();
    for (let i = 0; i < body.length; i++) splitter.write(body.subarray(i, i + 1));
    const pieces = splitter.end();
    expect(pieces.payloads.map((p) => [p.providerUserId, p.body.toString(), p.ref])).toEqual(whole.payloads.map((p) => [p.providerUserId, p.body.toString(), p.ref]));
    expect(pieces.accountChanges).toEqual(whole.accountChanges);
    expect(JSON.parse(whole.payloads[0]!.body.toString()).dailies[0].label).toBe('Läufer ✓ 🏃');
  });

  it('refuses a notification of more than MAX_NOTIFICATION_ITEMS items as soon as the one too many is read (issue 20)', () => {
    const splitter = new NotificationSplitter();
    splitter.write(Buffer.from('{"epochs":['));
    const item = Buffer.from(`{"userId":"${USER}"},`);
    for (let i = 0; i < MAX_NOTIFICATION_ITEMS; i++) splitter.write(item);
    expect(() => splitter.write(item)).toThrow(NotificationTooLarge);
  });

  it('reads deregistrations and permission changes, counts ping items, refuses bodies Garmin does not send', () => {
    const n = splitNotification(Buffer.from(JSON.stringify({ deregistrations: [{ userId: USER }], dailies: [{ userId: USER, callbackURL: 'https://apis.garmin.com/wellness-api/rest/dailies?token=x' }] })));
    expect(n.accountChanges).toEqual([{ kind: 'deregistrations', providerUserId: USER, permissions: null }]);
    expect(n.pings).toBe(1);
    expect(n.payloads).toEqual([]);
    for (const bad of ['nope', '[]', '{"steps": []}', '{"dailies": {}}', '{"dailies": [{"summaryId": "x"}]}', '{"dailies": [3]}']) {
      expect(() => splitNotification(Buffer.from(bad)), bad).toThrow(expect.objectContaining({ code: 'invalid' }));
    }
    for (const bad of ['', '3', '[[1]]', '{"dailies": {"a": 1}}', '{"dailies": []} x', '{"dailies": [{"userId": "a"}]']) {
      expect(() => splitNotification(Buffer.from(bad)), bad).toThrow(expect.objectContaining({ code: 'invalid' }));
    }
  });
});
