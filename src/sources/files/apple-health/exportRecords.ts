import { contentId } from './exportIds.js';
import { type Obj, fail, isoDate, knownAttributes, numberOf, provenanceFields } from './exportFields.js';
import type { XmlElement } from './exportXmlReader.js';
import { heartbeatObject } from './heartbeats.js';

/**
 * `Record` and `Correlation` elements → device-a line objects (docs/formats/device-a.md), which
 * device-a's own mapping turns into records: one vocabulary, one unit conversion, one sleep and
 * cycle derivation for both HealthKit formats.
 */

const CATEGORY_PREFIX = 'HKCategoryTypeIdentifier';
/**
 * A category Record without `value` holds HealthKit's raw value 0, which the export leaves out:
 * HKCategoryValueNotApplicable for types without values (mindful sessions), in bed for sleep
 * analysis (iOS 8/9 exports write in-bed rows so, beside asleep rows with value 1). Menstrual flow
 * has no value 0.
 */
function missingCategoryValue(type: string): string {
  if (type === 'HKCategoryTypeIdentifierSleepAnalysis') return 'HKCategoryValueSleepAnalysisInBed';
  if (type === 'HKCategoryTypeIdentifierMenstrualFlow') fail('missing value');
  return 'HKCategoryValueNotApplicable';
}
/** Attributes a Record reads itself (the rest are iOS 8/9 metadata). */
const RECORD_OWN = knownAttributes(['type', 'unit', 'value', 'min', 'max', 'average', 'recordCount']);

/** The id of a quantity or category sample (dates as UTC instants), the same inside a Correlation and at top level. */
function sampleId(a: Record<string, string>, start: unknown, end: unknown, value: string): string {
  return contentId('ah', [a.type, start as string, end as string, value, a.unit ?? '', a.sourceName ?? a.source]);
}

/**
 * The value of a quantity Record. iOS 8/9 wrote some samples as aggregates with `min`, `max` and
 * `average` and no `value` (heart rate): the average stands for the value, the rest goes to metadata.
 */
function quantityValue(a: Record<string, string>, metadata: Obj): number {
  const v = numberOf(a.value);
  if (a.value !== undefined) return v;
  const avg = numberOf(a.average);
  if (a.average === undefined) fail('missing value');
  for (const k of ['min', 'max', 'average'] as const) if (a[k] !== undefined) metadata[k] = numberOf(a[k]);
  return avg;
}

export function recordObjects(el: XmlElement): Obj[] {
  const a = el.attrs;
  const type = a.type;
  if (type === undefined || type === '') fail('missing type');
  const o = provenanceFields(el, RECORD_OWN);
  const metadata = o.metadata as Obj;
  if (a.recordCount !== undefined) metadata.record_count = numberOf(a.recordCount);
  if (type.startsWith(CATEGORY_PREFIX)) {
    let value = a.value;
    if (value === undefined || value === '') value = missingCategoryValue(type);
    o.kind = 'category';
    o.type = type;
    o.value = value;
    o.uuid = sampleId(a, o.start_date, o.end_date, value);
    return [o];
  }
  const value = quantityValue(a, metadata);
  o.kind = 'quantity';
  o.type = type;
  o.value = value;
  o.unit = a.unit;
  o.uuid = sampleId(a, o.start_date, o.end_date, String(value));
  const out: Obj[] = [o];
  for (const c of el.children) {
    if (c.name === 'HeartRateVariabilityMetadataList') {
      const hb = heartbeatObject(c, o, a.startDate);
      if (hb) out.push(hb);
    }
  }
  return out;
}

function memberObject(el: XmlElement): Obj {
  const a = el.attrs;
  const value = numberOf(a.value);
  const metadata: Obj = {};
  for (const c of el.children) if (c.name === 'MetadataEntry' && c.attrs.key !== undefined) metadata[c.attrs.key] = c.attrs.value ?? '';
  const start = isoDate(a.startDate);
  const end = a.endDate === a.startDate ? start : isoDate(a.endDate);
  return { uuid: sampleId(a, start, end, String(value)), type: a.type, value, unit: a.unit, start_date: start, end_date: end, metadata };
}

const CORRELATION_OWN = knownAttributes(['type']);

/** `Correlation` (blood pressure, food) with its member `Record`s, as device-a's correlation line. */
export function correlationObject(el: XmlElement): Obj {
  const a = el.attrs;
  if (a.type === undefined || a.type === '') fail('missing type');
  const o = provenanceFields(el, CORRELATION_OWN);
  const objects = el.children.filter((c) => c.name === 'Record').map(memberObject);
  o.kind = 'correlation';
  o.type = a.type;
  o.objects = objects;
  o.uuid = contentId('ahc', [a.type, o.start_date as string, o.end_date as string, a.sourceName ?? a.source, ...objects.map((m) => m.uuid as string)]);
  return o;
}
