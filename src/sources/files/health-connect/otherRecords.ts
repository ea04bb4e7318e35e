import type Database from 'better-sqlite3';
import type { NutritionRecord, ParseItem } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import { convertTo } from '../device-b/unitMapping.js';
import { FLOW_BY_INT, MEAL_BY_INT, NUTRIENT_UCUM, NUTRIENT_UNIT, NUTRITION_MAIN, snake } from '../device-b/vocabulary.js';
import { bloodPressureObservation } from '../exportShared/catalogRecords.js';
import { rejectedItem } from '../exportShared/unreadableExport.js';
import { quoteIdentifier } from '../exportShared/untrustedSqlite.js';
import { COMMON_COLUMNS, instantTimes, intervalTimes, iso, location, manual, recordId, rowExcerpt, rowMetadata, selectList, text, zoneMetadata, type Origins, type Row, type TableInfo } from './exportRows.js';
import { finiteValue, quantityRecord, TIME_COLUMNS } from './scalarRecords.js';

/**
 * Records that are not one value: blood pressure (an observation plus its two readings, as
 * device-b stores it), nutrition (one record with its nutrients) and menstrual flow (a category
 * sample). Each in row order; a row that cannot be read is rejected alone.
 */

function* eachRow(db: Database.Database, table: TableInfo, columns: readonly string[], what: string, decode: (row: Row) => ParseItem[]): Generator<ParseItem> {
  if (!table.columns.has('row_id')) {
    yield rejectedItem(table.name, 'the table has no row_id column: not read', [...table.columns].join(', '));
    return;
  }
  for (const row of db.prepare(`SELECT ${selectList(table, [...COMMON_COLUMNS, ...columns])} FROM ${quoteIdentifier(table.name)} ORDER BY row_id`).iterate() as Iterable<Row>) {
    let items: ParseItem[];
    try {
      items = decode(row);
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      items = [rejectedItem(location(table, row), `${what}: ${err.message}`, rowExcerpt(row))];
    }
    yield* items;
  }
}

export function readBloodPressure(db: Database.Database, table: TableInfo, origins: Origins): Generator<ParseItem> {
  return eachRow(db, table, [...TIME_COLUMNS.instant, 'systolic', 'diastolic', 'body_position', 'measurement_location'], 'blood pressure', (row) => {
    const id = recordId(row);
    const origin = origins.of(row.app_info_id, row.device_info_id);
    const t = instantTimes(row);
    const metadata = { ...rowMetadata(table, row, id, origin), body_position: row.body_position ?? null, measurement_location: row.measurement_location ?? null };
    const sys = quantityRecord(origin, row, `${id}:systolic`, 'blood_pressure_systolic', { value: finiteValue(row.systolic, 'systolic', true), ucum: 'mm[Hg]' }, t, metadata);
    const dia = quantityRecord(origin, row, `${id}:diastolic`, 'blood_pressure_diastolic', { value: finiteValue(row.diastolic, 'diastolic', true), ucum: 'mm[Hg]' }, t, metadata);
    return [{ record: bloodPressureObservation(origin.provenance, id, sys, dia, { ...metadata, ...zoneMetadata(t) }) }, { record: sys }, { record: dia }];
  });
}

/** Nutrient columns: the Jetpack property names snake-cased; masses are stored in grams, energies in calories. */
const MAIN_COLUMNS = Object.entries(NUTRITION_MAIN).map(([prop, spec]) => ({ column: snake(prop), spec }));
const OTHER_COLUMNS = Object.entries(NUTRIENT_UNIT).map(([prop, unit]) => ({ column: snake(prop), key: snake(prop), unit }));

export function readNutrition(db: Database.Database, table: TableInfo, origins: Origins): Generator<ParseItem> {
  const nutrientColumns = [...MAIN_COLUMNS.map((c) => c.column), ...OTHER_COLUMNS.map((c) => c.column)];
  return eachRow(db, table, [...TIME_COLUMNS.interval, 'meal_type', 'meal_name', ...nutrientColumns], 'nutrition', (row) => {
    const id = recordId(row);
    const origin = origins.of(row.app_info_id, row.device_info_id);
    const t = intervalTimes(row);
    const stored = (column: string, unit: string) => {
      const v = row[column];
      if (v === null || v === undefined) return null;
      return { value: finiteValue(v, column, true), ucum: column === 'energy' || column === 'energy_from_fat' ? 'cal' : unit };
    };
    const main: Record<string, number | null> = {};
    for (const { column, spec } of MAIN_COLUMNS) {
      const m = stored(column, 'g');
      main[spec.key] = m === null ? null : convertTo(m, spec.ucum, column);
    }
    const nutrients: NutritionRecord['nutrients'] = {};
    for (const { column, key, unit } of OTHER_COLUMNS) {
      const m = stored(column, 'g');
      if (m !== null) nutrients[key] = { value: convertTo(m, NUTRIENT_UCUM[unit]!, column), unit };
    }
    const record: NutritionRecord = {
      kind: 'nutrition',
      ...origin.provenance,
      external_id: id,
      start_date: iso(t.start),
      end_date: iso(t.end),
      name: text(row.meal_name),
      meal_type: typeof row.meal_type === 'number' ? (MEAL_BY_INT.get(row.meal_type) ?? null) : null,
      energy_kcal: main.energy_kcal ?? null,
      protein_g: main.protein_g ?? null,
      carbohydrates_g: main.carbohydrates_g ?? null,
      fat_g: main.fat_g ?? null,
      fiber_g: main.fiber_g ?? null,
      sugar_g: main.sugar_g ?? null,
      sodium_mg: main.sodium_mg ?? null,
      water_ml: null,
      nutrients,
      metadata: { ...rowMetadata(table, row, id, origin), ...zoneMetadata(t) },
    };
    return [{ record }];
  });
}

export function readMenstruationFlow(db: Database.Database, table: TableInfo, origins: Origins): Generator<ParseItem> {
  return eachRow(db, table, [...TIME_COLUMNS.instant, 'flow'], 'menstrual flow', (row) => {
    const id = recordId(row);
    const origin = origins.of(row.app_info_id, row.device_info_id);
    const t = instantTimes(row);
    const flow = row.flow === null || row.flow === undefined ? 'unspecified' : typeof row.flow === 'number' ? FLOW_BY_INT.get(row.flow) : undefined;
    if (!flow) throw new RecordError(`flow ${JSON.stringify(row.flow)} is not a known value`);
    return [
      {
        record: {
          kind: 'category',
          ...origin.provenance,
          external_id: id,
          type: 'menstrual_flow',
          value: flow,
          start_date: iso(t.start),
          end_date: iso(t.end),
          ...origin.sample,
          was_user_entered: manual(row),
          metadata: { ...rowMetadata(table, row, id, origin), ...zoneMetadata(t) },
        },
      },
    ];
  });
}
