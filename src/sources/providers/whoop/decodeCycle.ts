import type { DailySummaryRecord, NormalizedRecord, Provenance } from '../../../../commands/ingestion/records.js';
import { convert, quantity, requiredNumber, type Json } from '../../shared/connectorRecords.js';
import { localDateOf } from '../../shared/providerTimes.js';
import { amount, scoreOf, spanOf } from './whoopFields.js';

/**
 * A WHOOP physiological cycle: from falling asleep to the next falling asleep, so it rarely
 * matches a calendar day. It is dated by the local date twelve hours after its start (a cycle
 * starting at 23:00 is the next day's, one starting at 01:00 that day's). The current cycle has
 * no `end` and its score grows through the day: its summary is stored and updated by later
 * pulls; its energy sample waits for the end. `kilojoule` is the whole energy spent (kJ → kcal).
 */
const HALF_DAY_MS = 43_200_000;

export function decodeCycle(doc: Json, p: Provenance): NormalizedRecord[] {
  const id = requiredNumber(doc.id, 'id');
  const span = spanOf(doc);
  const score = scoreOf(doc);
  if (!score) return [];
  const offset = typeof span.zone.timezone === 'string' ? span.zone.timezone : '+00:00';
  const date = localDateOf(span.start.ms + HALF_DAY_MS, offset);
  const kj = amount(score, 'kilojoule', 'score.kilojoule');
  const kcal = kj === null ? null : convert(kj, 'kJ', 'kcal');
  const avgHr = amount(score, 'average_heart_rate', 'score.average_heart_rate');
  const ext = `cycle:${id}`;
  const summary: DailySummaryRecord = {
    kind: 'daily_summary',
    ...p,
    external_id: ext,
    date,
    steps: null,
    // The cycle's energy includes the basal part: it is total_energy_burned, not active energy.
    active_energy_kcal: null,
    distance_m: null,
    resting_heart_rate: null,
    avg_heart_rate: avgHr,
    sleep_seconds: null,
    metadata: {
      cycle_id: id,
      start: doc.start,
      end: doc.end ?? null,
      strain: score.strain ?? null,
      kilojoule: kj,
      total_energy_kcal: kcal,
      max_heart_rate: score.max_heart_rate ?? null,
      in_progress: span.end === null,
      ...span.zone,
    },
  };
  const out: NormalizedRecord[] = [summary];
  if (span.end && kj !== null) {
    out.push(quantity(p, { external_id: `${ext}:total_energy`, type: 'total_energy_burned', value: kj, unit: 'kJ', start: span.start.ms, end: span.end.ms, metadata: { ...span.zone, cycle_id: id } }));
  }
  return out;
}
