import type { MenstrualCycleRecord, WorkoutRecord } from '../../../../commands/ingestion/records.js';
import { cyclesOf, heavierFlow } from '../../derivations/menstrualCycles.js';
import { SampleSummary, WorkoutWindows } from '../../derivations/workoutSummaries.js';
import { isObject, RecordError } from '../../shared/recordError.js';
import { frame, parseInstant } from './healthConnectTimes.js';
import { recordTypeOf, type Common } from './recordCommon.js';
import { HEART_RATE_BOUNDS, SCALARS } from './recordTypes.js';
import { checkBounds, convertTo, readNumber, readUnit, roundSignificant, toStorage } from './unitMapping.js';
import { ucumOf } from '../../../catalog/units.js';

/**
 * Upload-wide state and the records it makes at the end of the upload: workouts wait for their
 * summaries, cycles for every flow day (derivations in src/sources/derivations/).
 */

/** A workout of one app (`group`: dataOrigin.packageName, '' without one) collecting its summary. */
export type PendingWorkout = { record: WorkoutRecord; group: string; start: number; end: number; hr: SampleSummary; steps: number | null; distance: number | null; energy: number | null };
export type FlowDay = { date: string; flow: string; id: string; c: Common; zone: string | undefined };
export type PeriodSpan = { first: string; last: string; id: string; c: Common; zone: string | undefined };
export type UploadState = { workouts: PendingWorkout[]; flows: FlowDay[]; periods: PeriodSpan[] };

// ---------------------------------------------------------------------------------------------
// Menstrual cycles (contracts §3 device-b grouping rule).

const DAY_MS = 86_400_000;
const dayNo = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
const dateOf = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

/**
 * Groups flow days and periods per app (dataOrigin.packageName) into cycles: a cycle starts at a
 * flow day after at least 2 days without flow, or at a MenstruationPeriod's first day. A period's
 * days count as bleeding days; the period ends at the cycle's last bleeding day.
 */
export function menstrualCycles(state: Pick<UploadState, 'flows' | 'periods'>, provider: string): MenstrualCycleRecord[] {
  const byPkg = new Map<string, { flows: FlowDay[]; periods: PeriodSpan[] }>();
  const group = (c: Common) => {
    const key = c.pkg ?? '';
    let g = byPkg.get(key);
    if (!g) byPkg.set(key, (g = { flows: [], periods: [] }));
    return g;
  };
  for (const fd of state.flows) group(fd.c).flows.push(fd);
  for (const p of state.periods) group(p.c).periods.push(p);

  const out: MenstrualCycleRecord[] = [];
  for (const [pkg, g] of byPkg) {
    type Day = { flow: string | null; ids: Set<string>; c: Common; zone: string | undefined; periodStart: boolean };
    const days = new Map<number, Day>();
    const day = (n: number, c: Common, zone: string | undefined) => {
      let d = days.get(n);
      if (!d) days.set(n, (d = { flow: null, ids: new Set(), c, zone, periodStart: false }));
      return d;
    };
    for (const fd of g.flows) {
      const d = day(dayNo(fd.date), fd.c, fd.zone);
      if (heavierFlow(fd.flow, d.flow)) d.flow = fd.flow;
      d.ids.add(fd.id);
    }
    for (const p of g.periods) {
      const a = dayNo(p.first);
      const b = dayNo(p.last);
      for (let n = a; n <= b; n++) day(n, p.c, p.zone).ids.add(p.id);
      day(a, p.c, p.zone).periodStart = true;
    }
    const sorted = [...days.keys()].sort((a, b) => a - b);
    for (const cy of cyclesOf(sorted, (n) => days.get(n)!.periodStart)) {
      const first = days.get(cy.start)!;
      const flow: Record<string, string> = {};
      const ids = new Set<string>();
      for (const n of cy.days) {
        const d = days.get(n)!;
        if (d.flow !== null) flow[dateOf(n)] = d.flow;
        for (const id of d.ids) ids.add(id);
      }
      const start = dateOf(cy.start);
      out.push({
        kind: 'menstrual_cycle',
        provider,
        source: first.c.provenance.source,
        device: first.c.provenance.device,
        body_worn: first.c.provenance.body_worn,
        external_id: `cycle:${pkg || provider}:${start}`,
        start_date: start,
        period_end_date: dateOf(cy.last),
        period_length_days: cy.period_length_days,
        cycle_length_days: cy.cycle_length_days,
        flow,
        metadata: {
          ...(pkg ? { dataOrigin: { packageName: pkg } } : {}),
          record_ids: [...ids].sort(),
          ...(first.zone !== undefined ? { timezone: first.zone } : {}),
        },
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Workout summaries from the same app's records inside the session.

const INTEREST: Readonly<Record<string, 'steps' | 'distance' | 'energy' | 'hr'>> = {
  Steps: 'steps',
  Distance: 'distance',
  ActiveCaloriesBurned: 'energy',
  HeartRate: 'hr',
};

/**
 * Adds records to the summaries of the upload's workouts, one at a time in upload order (the sums
 * are floating point: the order is part of the result), then writes the summaries into them.
 */
export function workoutSummaries(workouts: PendingWorkout[]): { add(r: unknown): void; finish(): void } {
  const windows = new WorkoutWindows(workouts);
  const add = (r: unknown) => {
    if (!isObject(r)) return;
    try {
      const what = INTEREST[recordTypeOf(r.recordType)];
      if (!what) return;
      const meta = r.metadata;
      const origin = isObject(meta) && isObject(meta.dataOrigin) ? meta.dataOrigin.packageName : undefined;
      const pkg = typeof origin === 'string' ? origin : '';
      if (!windows.has(pkg) || !isObject(meta) || typeof meta.id !== 'string' || !meta.id) return;
      const f = frame(r, 'interval');
      if (what === 'hr') {
        if (!Array.isArray(r.samples) || windows.overlapping(pkg, f.start, f.end).length === 0) return;
        for (const s of r.samples) {
          if (!isObject(s)) continue;
          try {
            const t = parseInstant(s.time, 'time');
            const bpm = readNumber(s.beatsPerMinute, 'beatsPerMinute');
            if (bpm < HEART_RATE_BOUNDS.min || bpm > HEART_RATE_BOUNDS.max) continue;
            for (const w of windows.containing(pkg, t, t)) w.hr.add(bpm);
          } catch (err) {
            if (!(err instanceof RecordError)) throw err;
          }
        }
        return;
      }
      const ws = windows.containing(pkg, f.start, f.end);
      if (!ws.length) return;
      const spec = SCALARS[recordTypeOf(r.recordType)]!;
      const raw = r[spec.field];
      const m = 'cls' in spec.unit ? readUnit(raw, spec.field, spec.unit.cls) : { value: readNumber(raw, spec.field), ucum: spec.unit.number };
      const v = toStorage(spec.type, m);
      checkBounds(spec.type, v.value, v.unit, spec.bounds, spec.field);
      const value = what === 'distance' ? convertTo({ value: v.value, ucum: ucumOf(v.unit) }, 'm', 'distance') : what === 'energy' ? convertTo({ value: v.value, ucum: ucumOf(v.unit) }, 'kcal', 'energy') : v.value;
      for (const w of ws) w[what] = roundSignificant((w[what] ?? 0) + value);
    } catch (err) {
      // Already reported by the main pass.
      if (!(err instanceof RecordError)) throw err;
    }
  };
  const finish = () => {
    for (const w of workouts) {
      w.record.steps = w.steps;
      w.record.distance_m = w.distance;
      w.record.active_energy_kcal = w.energy;
      if (w.hr.count > 0) {
        w.record.avg_heart_rate = w.hr.mean1;
        w.record.max_heart_rate = w.hr.max;
      }
    }
  };
  return { add, finish };
}
