import type { CategoryRecord, QuantityRecord } from '../../../../commands/ingestion/records.js';
import { quantityTypeForHealthKit } from '../../../catalog/quantityCatalog.js';
import type { Json } from '../../shared/recordError.js';
import { localDate } from './healthKitDates.js';
import { fail, finite, metadataOf, timesOf, uuidOf, wasUserEntered } from './lineFields.js';
import { sampleFieldsOf, type Upload } from './upload.js';
import { categoryTypeOf, categoryValueOf } from './vocabulary.js';

/** HKQuantitySample and HKCategorySample lines. */

export function quantityLine(up: Upload, o: Json): QuantityRecord {
  const uuid = uuidOf(o);
  const id = o.type;
  if (typeof id !== 'string' || id === '') fail('missing type');
  const qt = quantityTypeForHealthKit(id);
  if (!qt) fail(`unknown quantity type ${id}`);
  const value = o.value;
  if (!finite(value)) fail('value is not a finite number');
  const unit = o.unit;
  if (typeof unit !== 'string' || unit === '') fail('missing unit');
  // HealthKit's percent unit holds fractions (HKUnit.percent(): 0.97 means 97 %), while the
  // storage unit '%' is UCUM's (97 %), as every other provider sends it: a HealthKit '%' value is
  // a fraction, UCUM '1', converted like any other unit.
  const converted = up.convert(qt, value, unit === '%' ? '1' : unit);
  const t = timesOf(o);
  const p = up.prov(o);
  const md = metadataOf(o);
  md.original_value = value;
  md.original_unit = unit;
  return {
    kind: 'quantity',
    external_id: uuid,
    type: qt.type,
    value: converted,
    unit: qt.unit,
    ...sampleFieldsOf(p, t, wasUserEntered(o, md), md),
  };
}

export function categoryLine(up: Upload, o: Json): CategoryRecord {
  const uuid = uuidOf(o);
  const id = o.type;
  if (typeof id !== 'string' || id === '') fail('missing type');
  const ct = categoryTypeOf(id);
  if (!ct) fail(`unknown category type ${id}`);
  const value = categoryValueOf(ct, o.value);
  if (value === null) fail(`unknown value ${JSON.stringify(o.value ?? null)} for ${id}`);
  const t = timesOf(o);
  const p = up.prov(o);
  const md = metadataOf(o);
  md.original_value = o.value;
  if (ct.type === 'sleep_analysis') {
    up.sleep.add(p, t.start, t.end, uuid, value, md.timezone as string | null);
  } else if (ct.type === 'menstrual_flow' && value !== 'none') {
    up.flow.add(p, localDate(t.start, md.timezone as string | null), value, md.timezone as string | null);
  }
  return {
    kind: 'category',
    external_id: uuid,
    type: ct.type,
    value,
    ...sampleFieldsOf(p, t, wasUserEntered(o, md), md),
  };
}
