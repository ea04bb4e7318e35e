import type { MenstrualCycleRecord, SleepPhase, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { cyclesOf, heavierFlow } from '../../derivations/menstrualCycles.js';
import { asleepOf, groupsOf, NO_NIGHT_VITALS, phaseTotals, sleepNights } from '../../derivations/sleepSessions.js';
import { sha32 } from './lineFields.js';
import { type FlowMember, provenanceOf, type SleepMember } from './upload.js';
import { SLEEP_PHASES } from './vocabulary.js';

/** Records that need the whole upload: sleep sessions from sleep-analysis samples, menstrual cycles from flow samples. */

/** Sleep samples further apart than this start a new night (a new sleep session). */
const SLEEP_GAP_MS = 2 * 60 * 60 * 1000;
const DAY_MS = 86_400_000;

/** One night per source: consecutive samples less than 2 h apart (contracts.md §3). */
export function sleepSessions(members: SleepMember[]): SleepSessionRecord[] {
  return sleepNights(members, SLEEP_GAP_MS)
    .map(sleepSession)
    .sort((a, b) => (a.bedtime_start < b.bedtime_start ? -1 : a.bedtime_start > b.bedtime_start ? 1 : 0));
}

function sleepSession(night: SleepMember[]): SleepSessionRecord {
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
 * Menstrual cycles per source (derivations/menstrualCycles.ts). Flow "none" is not a flow day;
 * several samples on one day keep the heaviest flow.
 */
export function menstrualCycles(members: FlowMember[]): MenstrualCycleRecord[] {
  const out: MenstrualCycleRecord[] = [];
  for (const group of groupsOf(members, (m) => m.prov.key)) {
    const days = new Map<string, FlowMember>();
    for (const m of group) {
      if (heavierFlow(m.value, days.get(m.date)?.value)) days.set(m.date, m);
    }
    const dates = [...days.keys()].sort();
    const dateOf = new Map(dates.map((d) => [dayNumber(d), d]));
    for (const c of cyclesOf(dates.map(dayNumber))) {
      const start = dateOf.get(c.start)!;
      const first = days.get(start)!;
      const p = first.prov;
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
