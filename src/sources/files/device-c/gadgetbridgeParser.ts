import type { DeviceParser, ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { readSampleTable } from './activitySamples.js';
import { loadDevices, unknownDevice, type DeviceInfo } from './devices.js';
import { maxEpochS } from './limits.js';
import { mergeSleep, type SessionOut } from './sleepNights.js';
import { hasColumns, isSampleTable, openExport, readTables, type TableInfo } from './sqliteExport.js';
import { messageOf, printableExcerpt, truncateBytes } from './values.js';
import { readWorkouts } from './workouts.js';
import { readXiaomiSleep } from './xiaomiSleep.js';

/**
 * device-c (contracts §3): the band owner's Gadgetbridge database export ("Export DB" writes
 * the app's SQLite file, created by greenDAO). Read-only; the tables and constants used are
 * listed in docs/formats/device-c.md.
 *
 * - `*ACTIVITY_SAMPLE` tables with TIMESTAMP (epoch seconds), DEVICE_ID and STEPS: one row per
 *   minute. STEPS > 0 → step_count over [t, t+60 s); HEART_RATE → heart_rate at t (0, 255 and -1
 *   are "no reading"). Sleep minutes are taken from RAW_KIND where the table's meaning is known
 *   (Huami/Mi Band, Huami extended, Xiaomi), and nights are built from them.
 * - XIAOMI_SLEEP_TIME_SAMPLE (+ XIAOMI_SLEEP_STAGE_SAMPLE): sleep sessions the band computed.
 * - BASE_ACTIVITY_SUMMARY: workouts.
 *
 * Times are UTC epoch values, so records carry `metadata.timezone: null`. Rows that cannot be
 * stored become rejected items located as `TABLE:<rowid>`, or `TABLE:TIMESTAMP=…,DEVICE_ID=…`
 * for greenDAO's WITHOUT ROWID sample tables (their primary key is the row's identity).
 *
 * The parts: sqliteExport.ts opens the file defensively and reads its schema; devices.ts its
 * devices and their provenance; vocabulary.ts Gadgetbridge's codes; limits.ts the validation
 * limits; activitySamples.ts the minutes; sleepNights.ts the nights built from them and the
 * sessions (with src/sources/derivations/); xiaomiSleep.ts the band's own sleep tables;
 * workouts.ts the workouts; values.ts reading values and excerpts.
 */
export const gadgetbridgeParser: DeviceParser = {
  slug: 'device-c',
  parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    return parseGadgetbridgeExport(payload, ctx);
  },
};

async function* parseGadgetbridgeExport(payload: Buffer, ctx: ParseContext): AsyncGenerator<ParseItem> {
  const opened = openExport(payload);
  if ('error' in opened) {
    yield { rejected: { location: 'database', reason: opened.error, excerpt: printableExcerpt(payload) } };
    return;
  }
  const { db } = opened;
  try {
    let tables: Map<string, TableInfo>;
    let devices: Map<number, DeviceInfo>;
    try {
      tables = readTables(db);
      devices = loadDevices(db, tables, ctx.provider);
    } catch (err) {
      yield { rejected: { location: 'database', reason: `unreadable SQLite database: ${messageOf(err)}`, excerpt: printableExcerpt(payload) } };
      return;
    }
    const sampleTables = [...tables.values()].filter(isSampleTable).sort((a, b) => a.name.localeCompare(b.name));
    const summary = tables.get('BASE_ACTIVITY_SUMMARY');
    const sleepTime = tables.get('XIAOMI_SLEEP_TIME_SAMPLE');
    const hasSummary = hasColumns(summary, '_id', 'START_TIME', 'END_TIME', 'DEVICE_ID');
    const hasSleepTime = hasColumns(sleepTime, 'TIMESTAMP', 'DEVICE_ID', 'WAKEUP_TIME');
    if (sampleTables.length === 0 && !hasSummary && !hasSleepTime) {
      const names = [...tables.keys()].sort().join(', ');
      yield {
        rejected: {
          location: 'database',
          reason: 'no Gadgetbridge data tables: expected *ACTIVITY_SAMPLE tables (TIMESTAMP, DEVICE_ID, STEPS), BASE_ACTIVITY_SUMMARY or XIAOMI_SLEEP_TIME_SAMPLE',
          excerpt: truncateBytes(`tables: ${names || '(none)'}`),
        },
      };
      return;
    }

    const deviceOf = (id: number) => {
      let device = devices.get(id);
      if (!device) devices.set(id, (device = unknownDevice(id, ctx.provider)));
      return device;
    };

    const nights: SessionOut[] = [];
    for (const table of sampleTables) {
      try {
        for (const item of readSampleTable(db, table, deviceOf, ctx.provider, nights, maxEpochS(ctx))) yield item;
      } catch (err) {
        yield { rejected: { location: table.name, reason: `table unreadable: ${messageOf(err)}`, excerpt: '' } };
      }
    }

    if (hasSummary) {
      try {
        for (const item of readWorkouts(db, summary, sampleTables, deviceOf, ctx.provider, maxEpochS(ctx))) yield item;
      } catch (err) {
        yield { rejected: { location: summary.name, reason: `table unreadable: ${messageOf(err)}`, excerpt: '' } };
      }
    }

    const tableSessions: SessionOut[] = [];
    if (hasSleepTime) {
      try {
        for (const item of readXiaomiSleep(db, sleepTime, tables.get('XIAOMI_SLEEP_STAGE_SAMPLE'), deviceOf, ctx.provider, tableSessions, maxEpochS(ctx))) yield item;
      } catch (err) {
        yield { rejected: { location: sleepTime.name, reason: `table unreadable: ${messageOf(err)}`, excerpt: '' } };
      }
    }

    for (const session of mergeSleep(nights, tableSessions)) yield { record: session };
  } finally {
    db.close();
  }
}
