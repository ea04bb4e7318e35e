import { describe, expect, it } from 'vitest';
import type { QuantityRecord } from '../../../../commands/ingestion/records.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { fitDecoder } from '../../../../src/sources/files/fit/fitDecoder.js';
import { monitoringFit, ts16Of, type MonitoringMessage } from '../../../fixtures/fit/monitoringFit.js';
import { decodeAll, ofType } from '../decodeAll.js';

/**
 * contracts §20: "A monitoring file gives step_count, heart_rate and active_energy_burned per
 * interval" — from interval messages whose time is a 16-bit `timestamp_16`, whose activity type is
 * packed with the intensity, and whose counters are cumulative per activity type over the local
 * day. Files written by the decoder package's encoder, for what the one real file does not hold.
 */
const at = (iso: string) => new Date(iso);
// A local day of UTC−6 (the real vivofit file's): 2024-03-01 local runs 06:00Z to 06:00Z.
const INFO: MonitoringMessage = { info: { at: at('2024-03-01T06:00:00Z'), local: at('2024-03-01T00:00:00Z') } };
const WALKING = 6;
const RUNNING = 1;
const CYCLING = 2;
const SEDENTARY = 8;
const ts16 = (iso: string) => ts16Of(at(iso));
const decode = (messages: MonitoringMessage[]) => decodeAll(fitDecoder(), bufferByteSource(monitoringFit(messages)));
const rows = (records: QuantityRecord[]) => records.map((r) => [r.metadata.fit_activity_type, r.value, r.start_date, r.end_date]);

describe('fit monitoring files: amounts per interval (contracts §20)', () => {
  it('a 16-bit time is the time after the last full timestamp of any message whose low bits it is, across the 0xFFFF wrap and beyond 18 hours of readings', async () => {
    // The only full time is an event's; readings 5 h apart run past 65,536 s after it.
    const times = ['2024-03-01T15:00:00Z', '2024-03-01T20:00:00Z', '2024-03-02T01:00:00Z', '2024-03-02T06:00:00Z'];
    const { records, rejected } = await decode([{ event: at('2024-03-01T10:00:00Z') }, ...times.map((t, i) => ({ ts16: ts16(t), hr: 60 + i }))]);
    expect(rejected).toEqual([]);
    expect(ofType(records, 'quantity', 'heart_rate').map((r) => [r.value, r.start_date, r.end_date])).toEqual(times.map((t, i) => [60 + i, at(t).toISOString(), at(t).toISOString()]));
  });

  it('cumulative steps and active energy per activity type become the rise since the reading before, the first of a day from the local day\'s start', async () => {
    const { records, rejected } = await decode([
      INFO,
      { ts16: ts16('2024-03-01T07:00:00Z'), type: WALKING, intensity: 2, steps: 100 },
      { ts16: ts16('2024-03-01T07:10:00Z'), type: RUNNING, intensity: 5, steps: 40 },
      { ts16: ts16('2024-03-01T07:30:00Z'), type: WALKING, intensity: 3, steps: 160 },
      { ts16: ts16('2024-03-01T07:40:00Z'), type: SEDENTARY, intensity: 0 },
      // No rise: no record, but the next interval of walking starts here.
      { ts16: ts16('2024-03-01T08:00:00Z'), type: WALKING, intensity: 1, steps: 160 },
      // A cycling counter counts pedal cycles, not steps; its energy is read.
      { ts16: ts16('2024-03-01T08:10:00Z'), type: CYCLING, intensity: 4, steps: 500, kcal: 20 },
      { ts16: ts16('2024-03-01T08:30:00Z'), type: WALKING, intensity: 2, steps: 250, kcal: 10 },
    ]);
    expect(rejected).toEqual([]);
    const steps = ofType(records, 'quantity', 'step_count');
    expect(rows(steps)).toEqual([
      ['walking', 100, '2024-03-01T06:00:00.000Z', '2024-03-01T07:00:00.000Z'],
      ['running', 40, '2024-03-01T06:00:00.000Z', '2024-03-01T07:10:00.000Z'],
      ['walking', 60, '2024-03-01T07:00:00.000Z', '2024-03-01T07:30:00.000Z'],
      ['walking', 90, '2024-03-01T08:00:00.000Z', '2024-03-01T08:30:00.000Z'],
    ]);
    expect(steps.map((r) => r.metadata.fit_intensity)).toEqual([2, 5, 3, 2]);
    expect(steps.every((r) => r.metadata.timezone === '-06:00' && r.unit === 'count')).toBe(true);
    expect(rows(ofType(records, 'quantity', 'active_energy_burned'))).toEqual([
      ['cycling', 20, '2024-03-01T06:00:00.000Z', '2024-03-01T08:10:00.000Z'],
      ['walking', 10, '2024-03-01T06:00:00.000Z', '2024-03-01T08:30:00.000Z'],
    ]);
  });

  it('a lower reading within the day means the counters were reset (it is its own amount); the next local day counts from its start even when higher', async () => {
    const { records } = await decode([
      INFO,
      { ts16: ts16('2024-03-01T07:00:00Z'), type: WALKING, steps: 100 },
      { ts16: ts16('2024-03-01T08:00:00Z'), type: WALKING, steps: 30 },
      { at: at('2024-03-02T07:00:00Z'), type: WALKING, steps: 500 },
    ]);
    expect(rows(ofType(records, 'quantity', 'step_count'))).toEqual([
      ['walking', 100, '2024-03-01T06:00:00.000Z', '2024-03-01T07:00:00.000Z'],
      ['walking', 30, '2024-03-01T07:00:00.000Z', '2024-03-01T08:00:00.000Z'],
      ['walking', 500, '2024-03-02T06:00:00.000Z', '2024-03-02T07:00:00.000Z'],
    ]);
  });

  it('a day total is the last reading of its day: equal to its intervals it adds nothing, above them the rest is one interval, alone it is the whole day, below them it is named in the rejection', async () => {
    const { records, rejected } = await decode([
      INFO,
      { ts16: ts16('2024-03-01T07:00:00Z'), type: WALKING, steps: 100 },
      { ts16: ts16('2024-03-01T07:30:00Z'), type: RUNNING, steps: 50 },
      { ts16: ts16('2024-03-01T09:00:00Z'), type: WALKING, steps: 300, kcal: 50 },
      { at: at('2024-03-02T06:00:00Z'), activityType: WALKING, steps: 300, kcal: 40, durationMin: 1440 },
      { at: at('2024-03-02T06:00:00Z'), activityType: RUNNING, steps: 80, kcal: 3, durationMin: 1440 },
    ]);
    const steps = ofType(records, 'quantity', 'step_count');
    expect(rows(steps)).toEqual([
      ['walking', 100, '2024-03-01T06:00:00.000Z', '2024-03-01T07:00:00.000Z'],
      ['running', 50, '2024-03-01T06:00:00.000Z', '2024-03-01T07:30:00.000Z'],
      ['walking', 200, '2024-03-01T07:00:00.000Z', '2024-03-01T09:00:00.000Z'],
      ['running', 30, '2024-03-01T07:30:00.000Z', '2024-03-02T06:00:00.000Z'],
    ]);
    expect(rows(ofType(records, 'quantity', 'active_energy_burned'))).toEqual([
      ['walking', 50, '2024-03-01T06:00:00.000Z', '2024-03-01T09:00:00.000Z'],
      ['running', 3, '2024-03-01T06:00:00.000Z', '2024-03-02T06:00:00.000Z'],
    ]);
    expect(rejected).toEqual([expect.objectContaining({ location: 'the file', reason: '1 monitoring message was not read: 1 holding a day total below the last reading of that day (the intervals were kept)' })]);
  });

  it('what cannot be read is one rejection per file counting why: no full time before a 16-bit one, no activity type, no day to count a first reading from', async () => {
    const { records, rejected } = await decode([
      { ts16: ts16('2024-03-01T09:00:00Z'), hr: 70 },
      { event: at('2024-03-01T10:00:00Z') },
      { ts16: ts16('2024-03-01T10:05:00Z'), steps: 50 },
      { ts16: ts16('2024-03-01T10:10:00Z'), type: WALKING, steps: 100 },
      { ts16: ts16('2024-03-01T10:20:00Z'), type: WALKING, steps: 130 },
    ]);
    // Without monitoring_info the first walking reading only anchors the next; no offset is claimed.
    expect(rows(ofType(records, 'quantity', 'step_count'))).toEqual([['walking', 30, '2024-03-01T10:10:00.000Z', '2024-03-01T10:20:00.000Z']]);
    expect(records.every((r) => !('timezone' in r.metadata))).toBe(true);
    expect(ofType(records, 'quantity', 'heart_rate')).toEqual([]);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toBe(
      '3 monitoring messages were not read: 1 whose time is neither a full timestamp nor a 16-bit one after a full time in the file; 1 holding cumulative values without an activity type; 1 holding the first cumulative value of an activity type in a file without monitoring_info, so its interval has no start',
    );
  });

  it('the same file read again gives the same records with the same ids (a second import writes nothing, §13)', async () => {
    const messages: MonitoringMessage[] = [INFO, { ts16: ts16('2024-03-01T07:00:00Z'), type: WALKING, steps: 100, hr: 80 }, { ts16: ts16('2024-03-01T07:30:00Z'), type: WALKING, steps: 160 }];
    const first = await decode(messages);
    const second = await decode(messages);
    expect(first.records.map((r) => r.external_id)).toEqual(second.records.map((r) => r.external_id));
    expect(new Set(first.records.map((r) => r.external_id)).size).toBe(3);
  });
});
