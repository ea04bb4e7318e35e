import type Database from 'better-sqlite3';
import type { Metadata, ParseItem } from '../../../../commands/ingestion/records.js';
import { phaseTotals, type PhaseTotals } from '../../derivations/sleepSessions.js';
import { provenance, type DeviceInfo } from './devices.js';
import { MAX_SLEEP_SESSION_S, MIN_EPOCH_S } from './limits.js';
import { pushPhase, sleepSession, type NightPhase, type SessionOut } from './sleepNights.js';
import { hasColumns, q, type Row, type TableInfo } from './sqliteExport.js';
import { rejectRow } from './rejectedRows.js';
import { intOrNull, isInt, isoOf, isoOrRaw } from './values.js';
import { xiaomiStage } from './vocabulary.js';

/** Xiaomi sleep tables: sessions the band computed (XIAOMI_SLEEP_TIME_SAMPLE), with their stages (XIAOMI_SLEEP_STAGE_SAMPLE); timestamps in milliseconds. */

export function* readXiaomiSleep(
  db: Database.Database,
  timeTable: TableInfo,
  stageTable: TableInfo | undefined,
  deviceOf: (id: number) => DeviceInfo,
  provider: string,
  out: SessionOut[],
  maxTs: number,
): Generator<ParseItem> {
  const wanted = ['TIMESTAMP', 'DEVICE_ID', 'USER_ID', 'WAKEUP_TIME', 'IS_AWAKE', 'TOTAL_DURATION', 'DEEP_SLEEP_DURATION', 'LIGHT_SLEEP_DURATION', 'REM_SLEEP_DURATION', 'AWAKE_DURATION'];
  const columns = wanted.filter((c) => timeTable.columns.has(c));
  const rowid = timeTable.withoutRowid ? '' : 'rowid AS "__rowid", ';
  const rows = db.prepare(`SELECT ${rowid}${columns.map(q).join(', ')} FROM ${q(timeTable.name)} ORDER BY "TIMESTAMP", "DEVICE_ID"`).all() as Row[];
  const stages =
    stageTable && hasColumns(stageTable, 'TIMESTAMP', 'DEVICE_ID', 'STAGE')
      ? db.prepare(`SELECT "TIMESTAMP", "STAGE" FROM ${q(stageTable.name)} WHERE "DEVICE_ID" = ? AND "TIMESTAMP" >= ? AND "TIMESTAMP" < ? ORDER BY "TIMESTAMP"`)
      : null;

  for (const row of rows) {
    const bedMs = row.TIMESTAMP;
    const wakeMs = row.WAKEUP_TIME;
    let reason: string | null = null;
    if (!isInt(bedMs) || !isInt(wakeMs)) reason = 'TIMESTAMP and WAKEUP_TIME must be integers (epoch milliseconds)';
    else if (bedMs / 1000 < MIN_EPOCH_S || wakeMs / 1000 > maxTs) reason = `sleep ${isoOrRaw(bedMs / 1000)} .. ${isoOrRaw(wakeMs / 1000)} is outside ${isoOf(MIN_EPOCH_S)} .. one day after the upload`;
    else if (wakeMs <= bedMs) reason = `WAKEUP_TIME ${wakeMs} is not after TIMESTAMP ${bedMs}`;
    else if ((wakeMs - bedMs) / 1000 > MAX_SLEEP_SESSION_S) reason = `sleep of ${Math.round((wakeMs - bedMs) / 3600000)} h is implausible (more than 24 h)`;
    else if (!isInt(row.DEVICE_ID)) reason = `DEVICE_ID ${JSON.stringify(row.DEVICE_ID)} is not an integer`;
    if (reason) {
      yield { rejected: rejectRow(timeTable, row, reason) };
      continue;
    }
    const bed = Math.floor((bedMs as number) / 1000);
    const wake = Math.floor((wakeMs as number) / 1000);
    const device = deviceOf(row.DEVICE_ID as number);

    const phases: NightPhase[] = [];
    const stageRows = stages ? (stages.all(device.id, bedMs, wakeMs) as Row[]) : [];
    stageRows.forEach((s, i) => {
      const phase = xiaomiStage(intOrNull(s.STAGE));
      const next = stageRows[i + 1];
      const start = Math.floor((s.TIMESTAMP as number) / 1000);
      const end = next ? Math.floor((next.TIMESTAMP as number) / 1000) : wake;
      if (phase) pushPhase(phases, phase, start, Math.min(end, wake));
    });
    if (phases.length === 0) phases.push({ phase: 'asleep', start: bed, end: wake });
    const fromPhases = phaseTotals(phases);
    const minutes = (c: string) => {
      const v = intOrNull(row[c]);
      return v !== null && v >= 0 ? v * 60 : null;
    };
    const totals: PhaseTotals = {
      ...fromPhases,
      deep: minutes('DEEP_SLEEP_DURATION') ?? fromPhases.deep,
      light: minutes('LIGHT_SLEEP_DURATION') ?? fromPhases.light,
      rem: minutes('REM_SLEEP_DURATION') ?? fromPhases.rem,
      awake: minutes('AWAKE_DURATION') ?? fromPhases.awake,
    };
    const totalColumn = minutes('TOTAL_DURATION');
    const metadata: Metadata = {
      timezone: null,
      table: timeTable.name,
      method: 'sleep_table',
      stage_samples: stageRows.length,
      is_awake: row.IS_AWAKE === null || row.IS_AWAKE === undefined ? null : Boolean(row.IS_AWAKE),
      gadgetbridge_device_id: device.id,
      gadgetbridge_user_id: intOrNull(row.USER_ID),
    };
    out.push({
      deviceId: device.id,
      start: bed,
      end: wake,
      record: sleepSession(provenance(device, provider), `sleep:${device.identifier}:${bed}`, bed, wake, phases, totals, metadata, totalColumn && totalColumn > 0 ? totalColumn : undefined),
    });
  }
}

