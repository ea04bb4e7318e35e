import type { Metadata, NutritionRecord, ObservationRecord, ParseItem, QuantityRecord } from '../../../../commands/ingestion/records.js';
import { findQuantityType, quantityTypeForHealthKit } from '../../../catalog/quantityCatalog.js';
import { converter, ucumOf } from '../../../catalog/units.js';
import { isObject, type Json } from '../../shared/recordError.js';
import { fail, finite, metadataOf, strOrNull, timesOf, uuidOf, wasUserEntered, type Times } from './lineFields.js';
import { type Prov, provenanceOf, sampleFieldsOf, type Upload } from './upload.js';
import { DIETARY_PREFIX, NUTRIENT_TARGETS, NUTRIENT_UNITS, NUTRITION_FIELDS, snake } from './vocabulary.js';

/** HKCorrelation lines: blood pressure (an observation and its two samples) and food (a nutrition record). */

type Member = { obj: Json; id: string; value: number; unit: string };

function membersOf(o: Json): Member[] {
  const raw = o.objects;
  if (!Array.isArray(raw) || raw.length === 0) fail('correlation has no objects');
  return (raw as unknown[]).map((m, i) => {
    if (!isObject(m)) fail(`objects[${i}] is not an object`);
    if (typeof m.type !== 'string') fail(`objects[${i}] has no type`);
    if (!finite(m.value)) fail(`objects[${i}].value is not a finite number`);
    if (typeof m.unit !== 'string' || m.unit === '') fail(`objects[${i}] has no unit`);
    return { obj: m, id: m.type, value: m.value, unit: m.unit };
  });
}

function bloodPressureLines(up: Upload, o: Json, uuid: string, t: Times, p: Prov, md: Metadata): ParseItem[] {
  const members = membersOf(o);
  const sys = members.filter((m) => m.id === 'HKQuantityTypeIdentifierBloodPressureSystolic');
  const dia = members.filter((m) => m.id === 'HKQuantityTypeIdentifierBloodPressureDiastolic');
  if (sys.length !== 1 || dia.length !== 1) fail('blood pressure correlation needs exactly one systolic and one diastolic object');
  const parts = [
    { m: sys[0]!, qt: findQuantityType('blood_pressure_systolic')!, code: 'systolic', role: 'systolic' },
    { m: dia[0]!, qt: findQuantityType('blood_pressure_diastolic')!, code: 'diastolic', role: 'diastolic' },
  ];
  const samples: QuantityRecord[] = parts.map(({ m, qt, role }) => {
    const value = up.convert(qt, m.value, m.unit);
    const mt = m.obj.start_date === undefined && m.obj.end_date === undefined ? t : timesOf(m.obj);
    const mmd = isObject(m.obj.metadata) ? m.obj.metadata : {};
    mmd.timezone = typeof mmd.HKTimeZone === 'string' ? mmd.HKTimeZone : md.timezone;
    mmd.original_value = m.value;
    mmd.original_unit = m.unit;
    mmd.correlation_id = uuid;
    return {
      kind: 'quantity',
      external_id: typeof m.obj.uuid === 'string' && m.obj.uuid !== '' ? m.obj.uuid : `${uuid}:${role}`,
      type: qt.type,
      value,
      unit: qt.unit,
      ...sampleFieldsOf(p, mt, wasUserEntered(o, md), mmd),
    };
  });
  const observation: ObservationRecord = {
    kind: 'observation',
    external_id: uuid,
    code: 'blood_pressure',
    loinc_code: '85354-9',
    start_date: t.start_date,
    end_date: t.end_date,
    components: parts.map(({ qt, code }, i) => ({ code, loinc_code: qt.loinc_code, value: samples[i]!.value, unit: qt.unit })),
    metadata: md,
    ...provenanceOf(p),
  };
  return [{ record: observation }, ...samples.map((record) => ({ record }))];
}

function foodLine(up: Upload, o: Json, uuid: string, t: Times, p: Prov, md: Metadata): NutritionRecord {
  const rec: NutritionRecord = {
    kind: 'nutrition',
    external_id: uuid,
    start_date: t.start_date,
    end_date: t.end_date,
    name: strOrNull(md.HKFoodType),
    meal_type: strOrNull(o.meal_type),
    energy_kcal: null,
    protein_g: null,
    carbohydrates_g: null,
    fat_g: null,
    fiber_g: null,
    sugar_g: null,
    sodium_mg: null,
    water_ml: null,
    nutrients: {},
    metadata: md,
    ...provenanceOf(p),
  };
  for (const m of membersOf(o)) {
    if (!m.id.startsWith(DIETARY_PREFIX)) fail(`food correlation object ${m.id} is not a dietary quantity`);
    const field = NUTRITION_FIELDS[m.id];
    const qt = quantityTypeForHealthKit(m.id);
    if (field) {
      rec[field] = (rec[field] ?? 0) + up.convert(qt!, m.value, m.unit);
      continue;
    }
    const name = snake(m.id.slice(DIETARY_PREFIX.length));
    let value = m.value;
    let unit = m.unit;
    if (qt) {
      value = up.convert(qt, m.value, m.unit);
      unit = qt.unit;
    } else if (!NUTRIENT_UNITS.includes(unit)) {
      // Not a catalog type: brought to g, kcal or mL when UCUM knows the unit's dimension.
      for (const target of NUTRIENT_TARGETS) {
        const fn = converter(ucumOf(unit), ucumOf(target));
        if (fn) {
          value = Number(fn(value).toPrecision(12));
          unit = target;
          break;
        }
      }
    }
    const prev = rec.nutrients[name];
    rec.nutrients[name] = prev && prev.unit === unit ? { value: prev.value + value, unit } : { value, unit };
  }
  return rec;
}

export function correlationLine(up: Upload, o: Json): ParseItem | ParseItem[] {
  const uuid = uuidOf(o);
  const t = timesOf(o);
  const p = up.prov(o);
  const md = metadataOf(o);
  switch (o.type) {
    case 'HKCorrelationTypeIdentifierBloodPressure':
      return bloodPressureLines(up, o, uuid, t, p, md);
    case 'HKCorrelationTypeIdentifierFood':
      return { record: foodLine(up, o, uuid, t, p, md) };
    default:
      return fail(typeof o.type === 'string' ? `unknown correlation type ${o.type}` : 'missing type');
  }
}
