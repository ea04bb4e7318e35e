import type { Observation } from 'fhir/r4.js';
import { metaWithQuality } from './qualityTags.js';
import type { SleepSessionDoc } from '../../projections/records/sleepProjection.js';
import { loincCoding } from '../catalog/loincDisplays.js';
import { UCUM } from './observationOfSample.js';

/** LOINC codes of a night's sleep: the session is "Sleep duration", its stages are components. */
export const SLEEP_DURATION_LOINC = '93832-4';
const STAGES = [
  { code: '93831-6', text: 'Deep sleep', field: 'deep_sleep_seconds' },
  { code: '93830-8', text: 'Light sleep', field: 'light_sleep_seconds' },
  { code: '93829-0', text: 'REM sleep', field: 'rem_sleep_seconds' },
] as const;

export const sleepObservationId = (id: number) => `sleep-${id}`;
export function sleepIdOf(observationId: string): number | null {
  const m = /^sleep-(\d{1,15})$/.exec(observationId);
  return m ? Number(m[1]) : null;
}

const minutes = (seconds: number) => ({ value: Math.round((seconds / 60) * 100) / 100, unit: 'min', system: UCUM, code: 'min' });

/** The stages the source measured; an unstaged night (null durations, contracts §17) has none, so no `component`. */
function stageComponents(s: SleepSessionDoc): Pick<Observation, 'component'> {
  const component = STAGES.flatMap((st) => {
    const seconds = s[st.field];
    return seconds === null ? [] : [{ code: { coding: [loincCoding(st.code)], text: st.text }, valueQuantity: minutes(seconds) }];
  });
  return component.length ? { component } : {};
}

/** A sleep session as an R4 Observation: time asleep over the bedtime period, the stages as components. */
export function observationOfSleep(s: SleepSessionDoc, patientId: string): Observation {
  return {
    resourceType: 'Observation',
    id: sleepObservationId(s.id),
    ...metaWithQuality(s.quality),
    status: 'final',
    code: { coding: [loincCoding(SLEEP_DURATION_LOINC)], text: 'Sleep session' },
    subject: { reference: `Patient/${patientId}` },
    effectivePeriod: { start: s.bedtime_start, end: s.bedtime_end },
    valueQuantity: minutes(s.total_sleep_seconds),
    ...stageComponents(s),
    device: { display: s.device ?? s.source },
  };
}
