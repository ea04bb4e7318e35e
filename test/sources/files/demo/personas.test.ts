import { describe, expect, it } from 'vitest';
import type { QuantityRecord, SleepSessionRecord, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { demoDay, DEMO_PERSONAS } from '../../../../src/sources/files/demo/personas.js';

const days = (from: string, n: number) => Array.from({ length: n }, (_, i) => new Date(Date.parse(`${from}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10));
const quantities = (records: ReturnType<typeof demoDay>, type: string, source?: string) =>
  records.filter((r): r is QuantityRecord => r.kind === 'quantity' && r.type === type && (!source || r.source === source));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('demo personas: seeded, plausible synthetic days', () => {
  it('are reproducible: the same persona, day and seed give the same records', () => {
    for (const persona of DEMO_PERSONAS) expect(demoDay(persona, '2026-05-04', 'seed-1')).toEqual(demoDay(persona, '2026-05-04', 'seed-1'));
    expect(demoDay('mix', '2026-05-04', 'seed-1')).not.toEqual(demoDay('mix', '2026-05-04', 'seed-2'));
  });

  it('put every record on the day it was made for: a night never starts before midnight (spec "Instance admin routes", demo user: the given days)', () => {
    // 300 seeds per persona: before this rule, 34 of these 1,200 nights began before midnight (5 of the mix persona's).
    for (const persona of DEMO_PERSONAS) {
      for (let seed = 0; seed < 300; seed++) {
        for (const r of demoDay(persona, '2026-05-04', `seed-${seed}`)) {
          const start = 'start_date' in r ? r.start_date : 'bedtime_start' in r ? r.bedtime_start : null;
          if (start !== null) expect(start.slice(0, 10), `${persona} seed-${seed} ${r.kind}`).toBe('2026-05-04');
        }
      }
    }
  });

  it('mark every record synthetic and keep external ids unique within a day', () => {
    for (const persona of DEMO_PERSONAS) {
      const records = demoDay(persona, '2026-05-04', 's');
      for (const r of records) expect(r.metadata).toMatchObject({ synthetic: true });
      const ids = records.map((r) => `${r.kind}:${r.external_id}`);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('heart rate follows the day: lower asleep than awake, and within human range', () => {
    for (const day of days('2026-05-01', 10)) {
      const records = demoDay('mix', day, 's');
      const sleep = records.find((r): r is SleepSessionRecord => r.kind === 'sleep_session')!;
      const hr = quantities(records, 'heart_rate', 'apple');
      const asleep = hr.filter((r) => r.start_date >= sleep.bedtime_start && r.start_date < sleep.bedtime_end).map((r) => r.value);
      const awake = hr.filter((r) => r.start_date > sleep.bedtime_end).map((r) => r.value);
      expect(mean(asleep)).toBeLessThan(mean(awake) - 8);
      for (const r of hr) expect(r.value).toBeGreaterThan(35), expect(r.value).toBeLessThan(200);
    }
  });

  it('sleep has architecture: contiguous phases over the session, deep sleep early, REM late, totals equal the phases', () => {
    for (const day of days('2026-05-01', 60)) {
      const s = demoDay('sleep', day, 's').find((r): r is SleepSessionRecord => r.kind === 'sleep_session')!;
      expect(s.phases[0]!.start_date).toBe(s.bedtime_start);
      expect(s.phases.at(-1)!.end_date).toBe(s.bedtime_end);
      for (let i = 1; i < s.phases.length; i++) expect(s.phases[i]!.start_date).toBe(s.phases[i - 1]!.end_date);
      const mid = (Date.parse(s.bedtime_start) + Date.parse(s.bedtime_end)) / 2;
      const secs = (phase: string, half: 'first' | 'second') =>
        s.phases
          .filter((p) => p.phase === phase && (half === 'first' ? Date.parse(p.start_date) < mid : Date.parse(p.start_date) >= mid))
          .reduce((a, p) => a + (Date.parse(p.end_date) - Date.parse(p.start_date)) / 1000, 0);
      expect(secs('deep', 'first')).toBeGreaterThan(secs('deep', 'second'));
      expect(secs('rem', 'second')).toBeGreaterThan(secs('rem', 'first'));
      expect(s.total_sleep_seconds).toBe(s.deep_sleep_seconds + s.rem_sleep_seconds + s.light_sleep_seconds);
      expect(s.total_sleep_seconds).toBeGreaterThan(4 * 3600);
      expect(s.total_sleep_seconds).toBeLessThan(10 * 3600);
    }
  });

  it('the runner trains on a weekly plan with raised heart rate, and recovers: resting HR is higher and HRV lower after hard days than after rest days', () => {
    const all = days('2026-03-01', 56);
    const workouts = all.flatMap((d) => demoDay('runner', d, 's').filter((r): r is WorkoutRecord => r.kind === 'workout'));
    expect(workouts.length).toBe(40);
    for (const w of workouts) expect(w.avg_heart_rate!).toBeGreaterThan(110);
    const after = (kind: 'hard' | 'rest') =>
      all.slice(1).filter((d, i) => {
        const day = new Date(Date.parse(`${all[i]}T00:00:00Z`)).getUTCDay();
        return kind === 'rest' ? day === 1 || day === 5 : day === 2 || day === 6;
      });
    const nightly = (ds: string[], type: string) => mean(ds.map((d) => quantities(demoDay('runner', d, 's'), type)[0]!.value));
    expect(nightly(after('hard'), 'resting_heart_rate')).toBeGreaterThan(nightly(after('rest'), 'resting_heart_rate'));
    expect(nightly(after('hard'), 'hrv_rmssd')).toBeLessThan(nightly(after('rest'), 'hrv_rmssd'));
  });

  it('the weight persona is weighed every morning and trends down over the 90 days before the anchor, then levels off', () => {
    const ds = days('2026-02-01', 90);
    const mass = ds.map((d) => quantities(demoDay('weight', d, 's', '2026-05-02'), 'body_mass')[0]!.value);
    expect(mean(mass.slice(-14))).toBeLessThan(mean(mass.slice(0, 14)) - 4);
    const later = days('2027-06-01', 30).map((d) => quantities(demoDay('weight', d, 's', '2026-05-02'), 'body_mass')[0]!.value);
    expect(Math.abs(mean(later.slice(-14)) - mean(later.slice(0, 14)))).toBeLessThan(1);
  });
});
