import { contentId } from './exportIds.js';
import { type Obj, dateText } from './exportFields.js';
import type { XmlElement } from './exportXmlReader.js';

/**
 * A heart-rate-variability Record carries the beats it was computed from:
 * `<HeartRateVariabilityMetadataList><InstantaneousBeatsPerMinute bpm="61" time="8:05:41.52 PM"/>…`.
 * The times are local clock times without a date, written by the same phone and in the same zone
 * as the record's dates, so each beat's offset is its clock time minus the clock time of the
 * record's start (across midnight when smaller). They become device-a's heartbeat-series line.
 */

const DAY_S = 86_400;

/** Seconds since local midnight of `8:05:41.52 PM`, `20:05:41.52` or `20:05:41,52`; NaN otherwise. */
export function clockSeconds(s: string): number {
  const m = /^\s*(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?\s*(?:([AaPp])\.?\s*[Mm]\.?)?\s*$/.exec(s);
  if (!m) return NaN;
  let h = Number(m[1]);
  const mi = Number(m[2]);
  const sec = Number(m[3]);
  if (m[5]) {
    if (h < 1 || h > 12) return NaN;
    h = (h % 12) + (m[5].toLowerCase() === 'p' ? 12 : 0);
  }
  if (h > 23 || mi > 59 || sec > 59) return NaN;
  return h * 3600 + mi * 60 + sec + (m[4] ? Number(`0.${m[4]}`) : 0);
}

/** Clock seconds of a `2024-01-01 20:05:40 +0100` date as written (its own local time). */
function startClock(date: string): number {
  return clockSeconds(date.slice(11, 19));
}

/** `localStart` is the record's startDate as written (its local clock time is what the beats' times count from). */
export function heartbeatObject(list: XmlElement, record: Obj, localStart: string | undefined): Obj | null {
  const beats = list.children.filter((c) => c.name === 'InstantaneousBeatsPerMinute');
  if (beats.length === 0) return null;
  const local = dateText(localStart);
  const start = local !== undefined && local.length >= 19 ? startClock(local) : NaN;
  const series: { time_since_series_start: number; preceded_by_gap: boolean }[] = [];
  let prev = -1;
  for (const b of beats) {
    const t = clockSeconds(b.attrs.time ?? '');
    // An unreadable time makes the whole series unreadable: device-a rejects the negative offset.
    let offset = Number.isNaN(t) || Number.isNaN(start) ? -1 : t - start;
    if (offset < -1) offset += DAY_S;
    // Beats are in order: one before the previous has crossed midnight.
    if (offset >= 0 && offset < prev) offset += DAY_S;
    // Clock times are written to the hundredth of a second: offsets are rounded to the millisecond.
    series.push({ time_since_series_start: Number.isNaN(t) ? -1 : Math.round(Math.max(0, offset) * 1000) / 1000, preceded_by_gap: false });
    prev = offset;
  }
  return {
    kind: 'heartbeat_series',
    uuid: contentId('ahb', [record.uuid as string]),
    start_date: record.start_date,
    end_date: record.end_date,
    source_name: record.source_name,
    source_bundle_id: null,
    device_model: record.device_model,
    product_type: record.product_type,
    device_manufacturer: record.device_manufacturer,
    beats: series,
    metadata: { hrv_record_id: record.uuid, bpm: beats.map((b) => Number(b.attrs.bpm)) },
  };
}
