import type { Metadata, Provenance, SleepPhase, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { asleepOf, phaseTotals, type PhaseTotals } from '../../derivations/sleepSessions.js';
import { provenance, type DeviceInfo } from './devices.js';
import { MIN_SLEEP_S, NIGHT_GAP_S, SAMPLE_SECONDS } from './limits.js';
import type { TableInfo } from './sqliteExport.js';
import { isoOf, round1 } from './values.js';
import type { KindState, SleepScheme, Stage } from './vocabulary.js';

/** Nights from sleep minutes, and the sleep sessions of the export (from minutes and from the band's own sleep tables). */

export type SessionOut = { deviceId: number; start: number; end: number; record: SleepSessionRecord };

export type NightPhase = { phase: SleepPhase['phase']; start: number; end: number };
export type Night = {
  start: number;
  /** End of the last sleep minute. */
  lastSleepEnd: number;
  /** End of the last minute that belongs to the night (sleep or explicit awake). */
  lastEnd: number;
  phases: NightPhase[];
  hrSum: number;
  hrCount: number;
  hrMin: number | null;
  hrMax: number | null;
};
export type DeviceState = { kind: KindState; night: Night | null };

/** Adds one sleep-kind minute; answers the night it closed, if the minute starts a new one. */
export function addSleepMinute(state: DeviceState, t: number, stage: Stage): Night | null {
  let finished: Night | null = null;
  let night = state.night;
  if (night && t - night.lastEnd >= NIGHT_GAP_S) {
    finished = night;
    night = state.night = null;
  }
  if (!night) {
    if (stage === 'awake') return finished; // a night starts with sleep
    night = state.night = { start: t, lastSleepEnd: t, lastEnd: t, phases: [], hrSum: 0, hrCount: 0, hrMin: null, hrMax: null };
  } else if (t > night.lastEnd) {
    // Minutes of other kinds (or missing minutes) inside the night: awake.
    pushPhase(night.phases, 'awake', night.lastEnd, t);
  }
  pushPhase(night.phases, stage, t, t + SAMPLE_SECONDS);
  night.lastEnd = Math.max(night.lastEnd, t + SAMPLE_SECONDS);
  if (stage !== 'awake') night.lastSleepEnd = Math.max(night.lastSleepEnd, t + SAMPLE_SECONDS);
  return finished;
}

export function addNightHeartRate(night: Night, hr: number) {
  night.hrSum += hr;
  night.hrCount += 1;
  night.hrMin = night.hrMin === null ? hr : Math.min(night.hrMin, hr);
  night.hrMax = night.hrMax === null ? hr : Math.max(night.hrMax, hr);
}

export function pushPhase(phases: NightPhase[], phase: SleepPhase['phase'], start: number, end: number) {
  const last = phases[phases.length - 1];
  if (last && start < last.end) start = last.end;
  if (end <= start) return;
  if (last && last.phase === phase && last.end === start) last.end = end;
  else phases.push({ phase, start, end });
}

export function pushNight(out: SessionOut[], night: Night, table: TableInfo, scheme: SleepScheme, device: DeviceInfo, provider: string) {
  const phases = night.phases
    .filter((p) => p.start < night.lastSleepEnd)
    .map((p) => ({ ...p, end: Math.min(p.end, night.lastSleepEnd) }));
  const totals = phaseTotals(phases);
  if (asleepOf(totals) < MIN_SLEEP_S) return;
  const metadata: Metadata = {
    timezone: null,
    table: table.name,
    method: 'raw_kind',
    raw_kind_scheme: scheme.name,
    gadgetbridge_device_id: device.id,
    avg_heart_rate: night.hrCount ? round1(night.hrSum / night.hrCount) : null,
    min_heart_rate: night.hrMin,
    max_heart_rate: night.hrMax,
  };
  out.push({
    deviceId: device.id,
    start: night.start,
    end: night.lastSleepEnd,
    record: sleepSession(provenance(device, provider), `sleep:${device.identifier}:${night.start}`, night.start, night.lastSleepEnd, phases, totals, metadata),
  });
}

export function sleepSession(prov: Provenance, externalId: string, start: number, end: number, phases: NightPhase[], totals: PhaseTotals, metadata: Metadata, total?: number): SleepSessionRecord {
  return {
    ...prov,
    kind: 'sleep_session',
    external_id: externalId,
    bedtime_start: isoOf(start),
    bedtime_end: isoOf(end),
    total_sleep_seconds: total ?? asleepOf(totals),
    deep_sleep_seconds: totals.deep,
    rem_sleep_seconds: totals.rem,
    light_sleep_seconds: totals.light,
    awake_seconds: totals.awake,
    sleep_score: null,
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: null,
    spo2_avg: null,
    phases: phases.map((p) => ({ phase: p.phase, start_date: isoOf(p.start), end_date: isoOf(p.end) })),
    metadata,
  };
}

/** Sessions the band computed win over nights rebuilt from raw kinds of the same device. */
export function mergeSleep(nights: SessionOut[], tableSessions: SessionOut[]): SleepSessionRecord[] {
  const kept = nights.filter(
    (n) =>
      !tableSessions.some((s) => {
        if (s.deviceId !== n.deviceId) return false;
        const overlap = Math.min(s.end, n.end) - Math.max(s.start, n.start);
        return overlap > 0 && overlap * 2 >= Math.min(s.end - s.start, n.end - n.start);
      }),
  );
  return [...kept, ...tableSessions]
    .sort((a, b) => a.start - b.start || a.deviceId - b.deviceId)
    .map((s) => s.record);
}
