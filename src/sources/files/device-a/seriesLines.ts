import type { EcgRecord, HeartbeatSeriesRecord } from '../../../../commands/ingestion/records.js';
import { converter, ucumOf } from '../../../catalog/units.js';
import { isObject, type Json } from '../../shared/recordError.js';
import { fail, finite, metadataOf, strOrNull, timesOf, uuidOf } from './lineFields.js';
import { catalogValue, quantityField, ucumValue } from './unitMapping.js';
import { provenanceOf, type Upload } from './upload.js';
import { ECG_CLASSIFICATION_VALUES } from './vocabulary.js';

/** HKElectrocardiogram and HKHeartbeatSeriesSample lines. */

export function ecgLine(up: Upload, o: Json): EcgRecord {
  const uuid = uuidOf(o);
  const t = timesOf(o);
  const raw = o.voltages;
  if (!Array.isArray(raw)) fail('voltages is not an array');
  const unit = o.voltage_unit ?? 'mcV';
  if (typeof unit !== 'string' || unit === '') fail('voltage_unit is not a unit');
  const voltages = new Array<number>(raw.length);
  let factor = 1;
  if (unit !== 'mcV') {
    const fn = converter(ucumOf(unit), 'uV');
    if (!fn) fail(`cannot convert voltage unit "${unit}" to mcV`);
    factor = fn(1);
  }
  for (let i = 0; i < raw.length; i++) {
    const v: unknown = raw[i];
    if (!finite(v)) fail(`voltages[${i}] is not a finite number`);
    voltages[i] = factor === 1 ? v : Number((v * factor).toPrecision(12));
  }
  let classification: string | null = null;
  let classificationValue: number | null = finite(o.classification_value) ? o.classification_value : null;
  if (typeof o.classification === 'string' && o.classification !== '') {
    // Passed through unchecked (spec "ECG recording"): the watch's own label.
    classification = o.classification;
    classificationValue ??= ECG_CLASSIFICATION_VALUES[classification] ?? null;
  } else if (finite(o.classification)) {
    classificationValue ??= o.classification;
    classification = Object.keys(ECG_CLASSIFICATION_VALUES).find((k) => ECG_CLASSIFICATION_VALUES[k] === o.classification) ?? null;
  }
  const p = up.prov(o);
  const md = metadataOf(o);
  const hz = quantityField(o, 'sampling_frequency', 'Hz');
  return {
    kind: 'ecg',
    external_id: uuid,
    start_date: t.start_date,
    end_date: t.end_date,
    classification,
    classification_value: classificationValue,
    symptoms_status: strOrNull(o.symptoms_status),
    average_heart_rate: catalogValue(up, o, 'average_heart_rate', 'heart_rate', 'count/min'),
    sampling_frequency_hz: hz ? (hz.unit === 'Hz' ? hz.value : ucumValue(hz.value, hz.unit, 'Hz', 'sampling_frequency')) : null,
    number_of_measurements: voltages.length,
    voltages,
    metadata: md,
    ...provenanceOf(p),
  };
}

export function heartbeatLine(up: Upload, o: Json): HeartbeatSeriesRecord {
  const uuid = uuidOf(o);
  const t = timesOf(o);
  const raw = o.beats;
  if (!Array.isArray(raw)) fail('beats is not an array');
  const beats = new Array<{ offset_s: number; preceded_by_gap: boolean }>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const b: unknown = raw[i];
    if (!isObject(b) || !finite(b.time_since_series_start) || b.time_since_series_start < 0) {
      fail(`beats[${i}].time_since_series_start is not a number ≥ 0`);
    }
    beats[i] = { offset_s: b.time_since_series_start, preceded_by_gap: b.preceded_by_gap === true };
  }
  const p = up.prov(o);
  return {
    kind: 'heartbeat_series',
    external_id: uuid,
    start_date: t.start_date,
    end_date: t.end_date,
    beats,
    metadata: metadataOf(o),
    ...provenanceOf(p),
  };
}
