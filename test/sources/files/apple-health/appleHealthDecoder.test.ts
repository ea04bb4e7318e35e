import { describe, expect, it } from 'vitest';
import { decode, exportXml, ofKind } from './exportFixtures.js';

/** Contracts §13 "Apple exports" and issue 21 Deliver 2 (apple-health): decoding rules. */

const WATCH = 'device="&lt;&lt;HKDevice: 0x2829a1e00&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:9.1&gt;"';
const PHONE = 'device="&lt;&lt;HKDevice: 0x283b01f40&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,5, software:16.1&gt;"';

function hr(start: string, value: number, extra = '', source = 'Test Watch'): string {
  return ` <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="${source}" sourceVersion="9.1" ${WATCH} unit="count/min" creationDate="${start}" startDate="${start}" endDate="${start}" value="${value}"${extra ? `>\n${extra}\n </Record>` : '/>'}`;
}

describe('apple-health: Record elements (contracts §13)', () => {
  it('keeps each date\'s own offset: stored as UTC instants, HKTimeZone kept in metadata', async () => {
    const { records, rejected } = await decode(
      exportXml(
        [
          hr('2024-01-01 08:00:00 +0100', 61, '  <MetadataEntry key="HKTimeZone" value="Europe/Berlin"/>'),
          hr('2024-07-01 08:00:00 +0200', 62),
          hr('2024-07-01 08:00:00 -0500', 63),
        ].join('\n'),
      ),
    );
    expect(rejected).toEqual([]);
    const q = ofKind(records, 'quantity');
    expect(q.map((r) => r.start_date)).toEqual(['2024-01-01T07:00:00.000Z', '2024-07-01T06:00:00.000Z', '2024-07-01T13:00:00.000Z']);
    expect(q[0]!.metadata.timezone).toBe('Europe/Berlin');
    expect(q[0]!.metadata.HKTimeZone).toBe('Europe/Berlin');
    expect(q[1]!.metadata.timezone).toBeNull();
  });

  it('maps source, device string, version, creation date and HKWasUserEntered', async () => {
    const { records } = await decode(
      exportXml(
        ` <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Health" sourceVersion="16.1" ${PHONE} unit="lb" creationDate="2024-02-01 07:01:00 +0100" startDate="2024-02-01 07:00:00 +0100" endDate="2024-02-01 07:00:00 +0100" value="154.3">\n  <MetadataEntry key="HKWasUserEntered" value="1"/>\n </Record>`,
      ),
    );
    const [w] = ofKind(records, 'quantity');
    expect(w).toMatchObject({
      type: 'body_mass',
      unit: 'kg',
      source_name: 'Health',
      device_model: 'iPhone',
      product_type: 'iPhone14,5',
      device: 'iPhone (iPhone14,5)',
      source: 'apple',
      body_worn: false,
      was_user_entered: true,
      provider: 'apple-health',
    });
    expect(w!.value).toBeCloseTo(69.99, 2);
    expect(w!.metadata).toMatchObject({ source_version: '16.1', creation_date: '2024-02-01 07:01:00 +0100', device_name: 'iPhone', device_software: '16.1', original_value: 154.3, original_unit: 'lb' });
  });

  it('reads the vendor from the device manufacturer or the source name when Apple is not the maker', async () => {
    const { records } = await decode(
      exportXml(
        [
          ` <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="Health Mate" device="&lt;&lt;HKDevice: 0x1&gt;, name:Body Cardio, manufacturer:Withings, model:WBS04&gt;" unit="kg" startDate="2024-02-01 07:00:00 +0100" endDate="2024-02-01 07:00:00 +0100" value="70"/>`,
          ` <Record type="HKQuantityTypeIdentifierRestingHeartRate" sourceName="Oura" unit="count/min" startDate="2024-02-01 07:00:00 +0100" endDate="2024-02-01 07:00:00 +0100" value="52"/>`,
          ` <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Some App" unit="count" startDate="2024-02-01 07:00:00 +0100" endDate="2024-02-01 07:10:00 +0100" value="5"/>`,
        ].join('\n'),
      ),
    );
    expect(records.map((r) => r.source)).toEqual(['withings', 'oura', 'apple-health']);
  });

  it('category samples: values mapped; a missing value is the raw value 0 (not applicable, in bed), none for menstrual flow', async () => {
    const xml = exportXml(
      [
        ` <Record type="HKCategoryTypeIdentifierMindfulSession" sourceName="Breathe" startDate="2024-02-01 07:00:00 +0100" endDate="2024-02-01 07:01:00 +0100"/>`,
        ` <Record type="HKCategoryTypeIdentifierAppleStandHour" sourceName="Watch" value="HKCategoryValueAppleStandHourStood" startDate="2024-02-01 07:00:00 +0100" endDate="2024-02-01 08:00:00 +0100"/>`,
        ` <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Sleep" startDate="2024-02-01 01:00:00 +0100" endDate="2024-02-01 02:00:00 +0100"/>`,
        ` <Record type="HKCategoryTypeIdentifierMenstrualFlow" sourceName="Cycle" startDate="2024-02-01 01:00:00 +0100" endDate="2024-02-01 02:00:00 +0100"/>`,
      ].join('\n'),
    );
    const { records, rejected } = await decode(xml);
    expect(ofKind(records, 'category').map((r) => [r.type, r.value])).toEqual([
      ['mindful_session', 'not_applicable'],
      ['stand_hour', 'stood'],
      ['sleep_analysis', 'in_bed'],
    ]);
    expect(rejected).toHaveLength(1);
    const line = xml.slice(0, xml.indexOf('MenstrualFlow"')).split('\n').length;
    expect(rejected[0]).toMatchObject({ location: `export.xml:${line}`, reason: 'missing value' });
    expect(rejected[0]!.excerpt).toContain('HKCategoryTypeIdentifierMenstrualFlow');
  });

  it('one night of sleep-analysis samples becomes one sleep session with phases (device-a derivation)', async () => {
    const s = (v: string, a: string, b: string) =>
      ` <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="Test Watch" ${WATCH} value="HKCategoryValueSleepAnalysis${v}" startDate="2024-03-02 ${a} +0100" endDate="2024-03-02 ${b} +0100"/>`;
    const { records } = await decode(exportXml([s('AsleepCore', '00:00:00', '01:00:00'), s('AsleepDeep', '01:00:00', '01:30:00'), s('AsleepREM', '01:30:00', '02:00:00'), s('Awake', '02:00:00', '02:05:00')].join('\n')));
    const [night, ...more] = ofKind(records, 'sleep_session');
    expect(more).toEqual([]);
    expect(night).toMatchObject({ bedtime_start: '2024-03-01T23:00:00.000Z', bedtime_end: '2024-03-02T01:05:00.000Z', light_sleep_seconds: 3600, deep_sleep_seconds: 1800, rem_sleep_seconds: 1800, awake_seconds: 300, total_sleep_seconds: 7200 });
    expect(night!.phases.map((p) => p.phase)).toEqual(['light', 'deep', 'rem', 'awake']);
    // Sessions come after every element.
    expect(records[records.length - 1]!.kind).toBe('sleep_session');
  });

  it('iOS 8/9 records: compact dates, `source`, metadata as attributes, aggregates without value (count/s heart rate)', async () => {
    const { records, rejected } = await decode(
      exportXml(
        [
          ` <Record type="HKQuantityTypeIdentifierHeartRate" source="Old Strap" unit="count/s" startDate="20150908193500+0200" endDate="20150908203500+0200" min="1" max="1.5" average="1.2" recordCount="3"/>`,
          ` <Record type="HKQuantityTypeIdentifierHeight" source="Health" unit="m" creationDate="20141018163235+0100" startDate="20141018163200+0100" endDate="20141018163200+0100" HKWasUserEntered="1" Vendor Key="x" value="1.75"/>`,
        ].join('\n'),
        { doctype: null },
      ),
    );
    const [rate, height] = ofKind(records, 'quantity');
    expect(rate).toMatchObject({ type: 'heart_rate', value: 72, unit: 'count/min', start_date: '2015-09-08T17:35:00.000Z', end_date: '2015-09-08T18:35:00.000Z', source_name: 'Old Strap' });
    expect(rate!.metadata).toMatchObject({ min: 1, max: 1.5, average: 1.2, record_count: 3 });
    // "Vendor Key" is not well-formed: the element still imports, marked, keeping HealthKit's own keys.
    expect(height).toMatchObject({ type: 'height', value: 1.75, was_user_entered: true });
    expect(height!.metadata.xml_damaged).toBe('attribute without value');
    expect(height!.metadata.Key).toBeUndefined();
    expect(rejected).toEqual([]);
  });

  it('unknown types, unconvertible units and bad dates are rejected with the line and the element', async () => {
    const xml = exportXml(
      [
        hr('2024-01-01 08:00:00 +0100', 60),
        ` <Record type="HKQuantityTypeIdentifierNikeFuel" sourceName="Nike" unit="count" startDate="2024-01-01 08:00:00 +0100" endDate="2024-01-01 09:00:00 +0100" value="4"/>`,
        ` <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="X" unit="kg" startDate="2024-01-01 08:00:00 +0100" endDate="2024-01-01 08:00:00 +0100" value="60"/>`,
        ` <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="X" unit="count/min" startDate="2024-01-01 08:00:00" endDate="2024-01-01 08:00:00" value="60"/>`,
        ` <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="X" unit="count/min" startDate="2024-01-01 08:00:00 +0100" endDate="2024-01-01 08:00:00 +0100" value=""/>`,
      ].join('\n'),
    );
    const lineOf = (needle: string) => xml.slice(0, xml.indexOf(needle)).split('\n').length;
    const { records, rejected } = await decode(xml);
    expect(records).toHaveLength(1);
    expect(rejected.map((r) => [r.location, r.reason])).toEqual([
      [`export.xml:${lineOf('NikeFuel')}`, 'unknown quantity type HKQuantityTypeIdentifierNikeFuel'],
      [`export.xml:${lineOf('unit="kg"')}`, 'cannot convert unit "kg" to count/min (heart_rate)'],
      [`export.xml:${lineOf('startDate="2024-01-01 08:00:00"')}`, 'start_date is not a date-time with a time zone'],
      [`export.xml:${lineOf('value=""')}`, 'value is not a finite number'],
    ]);
  });

  it('a heart-rate-variability record with its beats gives a heartbeat series (offsets from the local clock times)', async () => {
    const beats = ['8:05:41.00 PM', '8:05:41.85 PM', '8:05:42.75 PM'].map((t, i) => `   <InstantaneousBeatsPerMinute bpm="${70 + i}" time="${t}"/>`).join('\n');
    const { records, rejected } = await decode(
      exportXml(
        ` <Record type="HKQuantityTypeIdentifierHeartRateVariabilitySDNN" sourceName="Test Watch" ${WATCH} unit="ms" startDate="2024-01-01 20:05:40 +0100" endDate="2024-01-01 20:06:40 +0100" value="48.5">\n  <HeartRateVariabilityMetadataList>\n${beats}\n  </HeartRateVariabilityMetadataList>\n </Record>`,
      ),
    );
    expect(rejected).toEqual([]);
    const [series] = ofKind(records, 'heartbeat_series');
    expect(series!.beats.map((b) => b.offset_s)).toEqual([1, 1.85, 2.75]);
    expect(series!.start_date).toBe('2024-01-01T19:05:40.000Z');
    expect(ofKind(records, 'quantity')[0]).toMatchObject({ type: 'hrv_sdnn', value: 48.5 });
    expect(series!.metadata.hrv_record_id).toBe(ofKind(records, 'quantity')[0]!.external_id);
  });
});

describe('apple-health: correlations and activity summaries (contracts §13)', () => {
  const bp = (type: string, v: number) =>
    `<Record type="HKQuantityTypeIdentifierBloodPressure${type}" sourceName="Cuff" unit="mmHg" startDate="2024-01-02 07:00:00 +0100" endDate="2024-01-02 07:00:00 +0100" value="${v}"/>`;

  it('a blood-pressure correlation gives an observation and two samples, whose ids equal the same samples at top level', async () => {
    const { records, rejected } = await decode(
      exportXml(
        [
          ` ${bp('Systolic', 121)}`,
          ` ${bp('Diastolic', 79)}`,
          ` <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="2024-01-02 07:00:00 +0100" endDate="2024-01-02 07:00:00 +0100">\n  <MetadataEntry key="HKWasUserEntered" value="1"/>\n  ${bp('Systolic', 121)}\n  ${bp('Diastolic', 79)}\n </Correlation>`,
        ].join('\n'),
      ),
    );
    expect(rejected).toEqual([]);
    const [obs] = ofKind(records, 'observation');
    expect(obs!.code).toBe('blood_pressure');
    expect(obs!.components.map((c) => [c.code, c.value])).toEqual([
      ['systolic', 121],
      ['diastolic', 79],
    ]);
    const q = ofKind(records, 'quantity');
    expect(q).toHaveLength(4);
    expect(q[2]!.external_id).toBe(q[0]!.external_id);
    expect(q[3]!.external_id).toBe(q[1]!.external_id);
    expect(q[2]!.metadata.correlation_id).toBe(obs!.external_id);
  });

  it('a food correlation gives a nutrition record', async () => {
    const m = (type: string, unit: string, v: number) =>
      `  <Record type="HKQuantityTypeIdentifierDietary${type}" sourceName="Food App" unit="${unit}" startDate="2024-01-02 12:00:00 +0100" endDate="2024-01-02 12:00:00 +0100" value="${v}"/>`;
    const { records } = await decode(
      exportXml(
        ` <Correlation type="HKCorrelationTypeIdentifierFood" sourceName="Food App" startDate="2024-01-02 12:00:00 +0100" endDate="2024-01-02 12:00:00 +0100">\n  <MetadataEntry key="HKFoodType" value="Porridge"/>\n${m('EnergyConsumed', 'kcal', 350)}\n${m('Protein', 'g', 12)}\n${m('Iron', 'mg', 3)}\n </Correlation>`,
      ),
    );
    const [food] = ofKind(records, 'nutrition');
    expect(food).toMatchObject({ name: 'Porridge', energy_kcal: 350, protein_g: 12, nutrients: { iron: { value: 3, unit: 'mg' } } });
  });

  it('ActivitySummary elements become daily summaries with their goals in metadata', async () => {
    const { records, rejected } = await decode(
      exportXml(
        [
          ` <ActivitySummary dateComponents="2024-01-03" activeEnergyBurned="512.5" activeEnergyBurnedGoal="500" activeEnergyBurnedUnit="kcal" appleMoveTime="0" appleMoveTimeGoal="0" appleExerciseTime="41" appleExerciseTimeGoal="30" appleStandHours="11" appleStandHoursGoal="12"/>`,
          ` <ActivitySummary dateComponents="2024-01-04" activeEnergyBurned="2000" activeEnergyBurnedGoal="2100" activeEnergyBurnedUnit="kJ"/>`,
          ` <ActivitySummary activeEnergyBurned="1"/>`,
        ].join('\n'),
      ),
    );
    const days = ofKind(records, 'daily_summary');
    expect(days[0]).toMatchObject({ date: '2024-01-03', active_energy_kcal: 512.5, source: 'apple', metadata: { exercise_minutes: 41, stand_hours: 11, stand_hours_goal: 12, active_energy_goal: 500 } });
    expect(days[1]!.active_energy_kcal).toBeCloseTo(478.01, 2);
    expect(rejected.map((r) => r.reason)).toEqual(['dateComponents is not a date (YYYY-MM-DD)']);
  });
});
