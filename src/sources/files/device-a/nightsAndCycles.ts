import type { MenstrualCycleRecord, SleepPhase, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { cyclesOf } from '../../derivations/menstrualCycles.js';
import { asleepOf, NO_NIGHT_VITALS, phaseTotals } from '../../derivations/sleepSessions.js';
import type { FlowDays, SleepMember, SleepSamples } from './endOfUploadSamples.js';
import { sha32 } from './lineFields.js';
import { type Prov, provenanceOf } from './upload.js';
import { SLEEP_PHASES } from './vocabulary.js';

/** Records that need the whole upload: sleep sessions from sleep-analysis samples, menstrual cycles from flow samples. */

/** Sleep samples further apart than this start a new night (a new sleep session). */
const SLEEP_GAP_MS = 2 * 60 * 60 * 1000;
const DAY_MS = 86_400_000;

/**
 * One night per source: consecutive samples less than 2 h apart (contracts.md §3), in order of
 * bedtime (a tie keeps the order of sources, then of time). Each session is built when it is
 * yielded: an export's nights are never all in memory at once, only one small entry per night.
 */
export function* sleepSessions(samples: SleepSamples<Prov>): Generator<SleepSessionRecord> {
  const { order, nights } = samples.nights(SLEEP_GAP_MS);
  const byBedtime = nights.map((n) => ({ ...n, bedtime: new Date(samples.memberOf(order[n.from]!).start).toISOString() }));
  byBedtime.sort((a, b) => (a.bedtime < b.bedtime ? -1 : a.bedtime > b.bedtime ? 1 : 0));
  for (const n of byBedtime) {
    const night: SleepMember<Prov>[] = [];
    for (let k = n.from; k < n.to; k++) night.push(samples.memberOf(order[k]!));
    yield sleepSessionOf(night);
  }
}

/** The session of one night's samples, in time order. */
export function sleepSessionOf(night: SleepMember<Prov>[]): SleepSessionRecord {
  const stretches = night.map((m) => ({ phase: SLEEP_PHASES[m.value]!, start: m.start, end: m.end }));
  const ms = phaseTotals(stretches);
  let end = -Infinity;
  for (const m of night) end = Math.max(end, m.end);
  const phases: SleepPhase[] = stretches.map((s) => ({ phase: s.phase, start_date: new Date(s.start).toISOString(), end_date: new Date(s.end).toISOString() }));
  const sec = (x: number) => Math.round(x / 1000);
  const first = night[0]!;
  const p = first.prov;
  return {
    kind: 'sleep_session',
    external_id: `sleep:${sha32(night.map((m) => m.id).sort().join('\n'))}`,
    bedtime_start: new Date(first.start).toISOString(),
    bedtime_end: new Date(end).toISOString(),
    // Sums of the samples' durations per phase; total sleep is every asleep phase (not awake, not in bed).
    total_sleep_seconds: sec(asleepOf(ms)),
    deep_sleep_seconds: sec(ms.deep),
    rem_sleep_seconds: sec(ms.rem),
    light_sleep_seconds: sec(ms.light),
    awake_seconds: sec(ms.awake),
    ...NO_NIGHT_VITALS,
    phases,
    metadata: {
      timezone: first.tz,
      in_bed_seconds: sec(ms.in_bed),
      asleep_unspecified_seconds: sec(ms.asleep),
      sample_count: night.length,
      source_name: p.source_name,
      source_bundle_id: p.source_bundle_id,
    },
    ...provenanceOf(p),
  };
}

const dayNumber = (date: string) => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / DAY_MS;

/**
 * Menstrual cycles per source (derivations/menstrualCycles.ts) from the flow each day keeps
 * (endOfUploadSamples.ts: flow "none" is not a flow day; several samples on one day keep the
 * heaviest), in order of their start.
 */
export function menstrualCycles(flow: FlowDays<Prov>): MenstrualCycleRecord[] {
  const out: MenstrualCycleRecord[] = [];
  for (const { prov: p, days } of flow.bySource()) {
    const dates = [...days.keys()].sort();
    const dateOf = new Map(dates.map((d) => [dayNumber(d), d]));
    for (const c of cyclesOf(dates.map(dayNumber))) {
      const start = dateOf.get(c.start)!;
      const first = days.get(start)!;
      const flow: Record<string, string> = {};
      for (const n of c.days) flow[dateOf.get(n)!] = days.get(dateOf.get(n)!)!.value;
      out.push({
        kind: 'menstrual_cycle',
        external_id: `cycle:${sha32(`${p.key}\n${start}`)}`,
        start_date: start,
        period_end_date: dateOf.get(c.last)!,
        period_length_days: c.period_length_days,
        cycle_length_days: c.cycle_length_days,
        flow,
        metadata: { timezone: first.tz, source_name: p.source_name, source_bundle_id: p.source_bundle_id },
        ...provenanceOf(p),
      });
    }
  }
  return out.sort((a, b) => (a.start_date < b.start_date ? -1 : a.start_date > b.start_date ? 1 : 0));
}
