import Database from 'better-sqlite3';
import type {
  DeviceParser,
  Metadata,
  ParseContext,
  ParseItem,
  Provenance,
  QuantityRecord,
  RejectedItem,
  SleepPhase,
  SleepSessionRecord,
  WorkoutRecord,
} from '../../../../commands/ingestion/records.js';
import { isBodyWorn, type DeviceKind } from '../../shared/vendors.js';

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
 */
export const gadgetbridgeParser: DeviceParser = {
  slug: 'device-c',
  parse(payload: Buffer, ctx: ParseContext): AsyncIterable<ParseItem> {
    return parseGadgetbridgeExport(payload, ctx);
  },
};

// ---------------------------------------------------------------------------------------------
// Limits and constants (docs/formats/device-c.md "Validation")

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
/** Earliest plausible sample: devices with a lost clock report 1970 or 2000. */
const MIN_EPOCH_S = Date.UTC(2010, 0, 1) / 1000;
/**
 * Latest plausible sample: one day after the payload was received (clock skew between band and
 * server). The receipt time, not the clock: a re-run of the job must give the same records.
 */
const maxEpochS = (ctx: ParseContext) => Math.floor(Date.parse(ctx.receivedAt) / 1000) + 86_400;
/** Gadgetbridge activity samples are per minute. */
const SAMPLE_SECONDS = 60;
/** More steps than this in one sample is a corrupt value (Huami stores a byte per minute). */
const MAX_STEPS_PER_SAMPLE = 5000;
/** HEART_RATE values that mean "not measured" (ActivitySample.NOT_MEASURED, Huami's 255, 0). */
const HR_NO_READING: ReadonlySet<number> = new Set([-1, 0, 255]);
const HR_MIN = 20;
const HR_MAX = 250;
/** Sleep minutes closer than this belong to the same night. */
const NIGHT_GAP_S = 3600;
/** Nights with less sleep than this are movement noise (Gadgetbridge's own SleepAnalysis uses 5 min). */
const MIN_SLEEP_S = 5 * 60;
/** A session from a sleep table longer than this is corrupt. */
const MAX_SLEEP_SESSION_S = 24 * 3600;
/** A workout longer than this is corrupt. */
const MAX_WORKOUT_S = 7 * 24 * 3600;
const EXCERPT_BYTES = 1024;

const STEP_UNIT = 'count';
const HR_UNIT = 'count/min';

// ---------------------------------------------------------------------------------------------
// Raw activity kinds (docs/formats/device-c.md "Raw kinds")

type Stage = 'light' | 'deep' | 'rem' | 'awake';
type KindState = { last: number };
type SleepScheme = { name: string; classify(row: Row, state: KindState): Stage | null };

/** Huami bands in MI_BAND_ACTIVITY_SAMPLE (HuamiConst / MiBand2SampleProvider). */
const HUAMI = { UNSET: -1, NO_CHANGE: 0, LIGHT_SLEEP: 9, IGNORE: 10, DEEP_SLEEP: 11 } as const;
/** Mi Band 1 in MI_BAND_ACTIVITY_SAMPLE (MiBandSampleProvider). */
const MI_BAND_1 = { DEEP_SLEEP: 4, LIGHT_SLEEP: 5 } as const;
/** Zepp OS devices in HUAMI_EXTENDED_ACTIVITY_SAMPLE (HuamiExtendedSampleProvider). */
const HUAMI_EXT = { SLEEP: 120, DEEP_SLEEP: 121, REM_SLEEP: 122, REM_THRESHOLD: 55, DEEP_THRESHOLD: 42 } as const;
/** Gadgetbridge's ActivityKind codes, stored as is by XiaomiSampleProvider and in BASE_ACTIVITY_SUMMARY. */
const ACTIVITY_KIND = { LIGHT_SLEEP: 0x2, DEEP_SLEEP: 0x4, REM_SLEEP: 0x01000000, AWAKE_SLEEP: 0x02000000 } as const;

const huamiScheme: SleepScheme = {
  name: 'huami',
  classify(row, state) {
    const raw = intOrNull(row.RAW_KIND);
    if (raw === null) return null;
    // MiBand2SampleProvider.postprocess: only the low nibble is the kind; 0 and 10 repeat the
    // previous kind of the same device.
    let kind = raw === HUAMI.UNSET ? raw : raw & 0xf;
    if (kind === HUAMI.NO_CHANGE || kind === HUAMI.IGNORE) kind = state.last;
    else state.last = kind;
    if (kind === HUAMI.LIGHT_SLEEP) return 'light';
    if (kind === HUAMI.DEEP_SLEEP) return 'deep';
    return null;
  },
};

const miBand1Scheme: SleepScheme = {
  name: 'mi_band_1',
  classify(row) {
    const raw = intOrNull(row.RAW_KIND);
    if (raw === MI_BAND_1.LIGHT_SLEEP) return 'light';
    if (raw === MI_BAND_1.DEEP_SLEEP) return 'deep';
    return null;
  },
};

const huamiExtendedScheme: SleepScheme = {
  name: 'huami_extended',
  classify(row) {
    const raw = intOrNull(row.RAW_KIND);
    if (raw === HUAMI_EXT.SLEEP) {
      // The band reports "sleep" for every stage; HuamiExtendedSampleProvider tells the stage
      // from the REM_SLEEP and DEEP_SLEEP columns (7 low bits) with these thresholds.
      const rem = (intOrNull(row.REM_SLEEP) ?? 0) & 127;
      const deep = (intOrNull(row.DEEP_SLEEP) ?? 0) & 127;
      if (rem > HUAMI_EXT.REM_THRESHOLD) return 'rem';
      if (deep > HUAMI_EXT.DEEP_THRESHOLD) return 'deep';
      return 'light';
    }
    if (raw === HUAMI_EXT.DEEP_SLEEP) return 'deep';
    if (raw === HUAMI_EXT.REM_SLEEP) return 'rem';
    return null;
  },
};

const activityKindScheme: SleepScheme = {
  name: 'activity_kind',
  classify(row) {
    switch (intOrNull(row.RAW_KIND)) {
      case ACTIVITY_KIND.LIGHT_SLEEP:
        return 'light';
      case ACTIVITY_KIND.DEEP_SLEEP:
        return 'deep';
      case ACTIVITY_KIND.REM_SLEEP:
        return 'rem';
      case ACTIVITY_KIND.AWAKE_SLEEP:
        return 'awake';
      default:
        return null;
    }
  },
};

function sleepSchemeFor(table: string, device: DeviceInfo): SleepScheme | null {
  switch (table) {
    case 'MI_BAND_ACTIVITY_SAMPLE':
      return device.typeName === 'MIBAND' || (device.typeName === null && device.type === 10) ? miBand1Scheme : huamiScheme;
    case 'HUAMI_EXTENDED_ACTIVITY_SAMPLE':
      return huamiExtendedScheme;
    case 'XIAOMI_ACTIVITY_SAMPLE':
      return activityKindScheme;
    default:
      // Other devices' raw kinds are device specific: their minutes give steps and heart rate only.
      return null;
  }
}

/** XIAOMI_SLEEP_STAGE_SAMPLE.STAGE as SleepDetailsParser.decodeStage stores it. */
function xiaomiStage(stage: number | null): SleepPhase['phase'] | null {
  switch (stage) {
    case 2:
      return 'deep';
    case 3:
      return 'light';
    case 4:
      return 'rem';
    case 0: // NOT_SLEEP inside a session
    case 5: // AWAKE
      return 'awake';
    default: // 1 = N/A
      return null;
  }
}

/** BASE_ACTIVITY_SUMMARY.ACTIVITY_KIND (ActivityKind codes) → canonical workout type. */
const WORKOUT_TYPES: ReadonlyMap<number, readonly [gadgetbridge: string, canonical: string]> = new Map([
  [0x00000010, ['RUNNING', 'running']],
  [0x00000020, ['WALKING', 'walking']],
  [0x00000040, ['SWIMMING', 'swimming']],
  [0x00000080, ['CYCLING', 'cycling']],
  [0x00000100, ['TREADMILL', 'running']],
  [0x00000200, ['EXERCISE', 'other']],
  [0x00000400, ['SWIMMING_OPENWATER', 'swimming']],
  [0x00000800, ['INDOOR_CYCLING', 'cycling']],
  [0x00001000, ['ELLIPTICAL_TRAINER', 'elliptical']],
  [0x00002000, ['JUMP_ROPING', 'jump_rope']],
  [0x00004000, ['YOGA', 'yoga']],
  [0x00008000, ['SOCCER', 'soccer']],
  [0x00010000, ['ROWING_MACHINE', 'rowing']],
  [0x00020000, ['CRICKET', 'cricket']],
  [0x00040000, ['BASKETBALL', 'basketball']],
  [0x00080000, ['PINGPONG', 'table_tennis']],
  [0x00100000, ['BADMINTON', 'badminton']],
  [0x00200000, ['STRENGTH_TRAINING', 'strength_training']],
  [0x00400000, ['HIKING', 'hiking']],
  [0x00800000, ['CLIMBING', 'climbing']],
  [0x04000002, ['HANDCYCLING', 'hand_cycling']],
  [0x04000003, ['E_BIKE', 'cycling']],
  [0x04000004, ['BIKE_COMMUTE', 'cycling']],
  [0x04000005, ['HANDCYCLING_INDOOR', 'hand_cycling']],
  [0x04000008, ['STAIR_STEPPER', 'stair_climbing']],
  [0x04000009, ['PILATES', 'pilates']],
  [0x0400000a, ['POOL_SWIM', 'swimming']],
  [0x0400000b, ['TENNIS', 'tennis']],
  [0x0400000d, ['TABLE_TENNIS', 'table_tennis']],
  [0x0400000e, ['AMERICAN_FOOTBALL', 'american_football']],
  [0x04000010, ['CARDIO', 'mixed_cardio']],
  [0x04000012, ['INDOOR_WALKING', 'walking']],
  [0x04000013, ['XC_CLASSIC_SKI', 'cross_country_skiing']],
  [0x04000014, ['SKIING', 'downhill_skiing']],
  [0x04000015, ['SNOWBOARDING', 'snowboarding']],
  [0x04000016, ['ROWING', 'rowing']],
  [0x04000017, ['MOUNTAINEERING', 'climbing']],
  [0x0400001a, ['PADDLING', 'paddle_sports']],
  [0x04000020, ['GOLF', 'golf']],
  [0x04000025, ['INLINE_SKATING', 'skating']],
  [0x04000026, ['ROCK_CLIMBING', 'climbing']],
  [0x04000027, ['CLIMB_INDOOR', 'climbing']],
  [0x04000028, ['BOULDERING', 'climbing']],
  [0x0400002c, ['ICE_SKATING', 'skating']],
  [0x04000030, ['STAND_UP_PADDLEBOARDING', 'paddle_sports']],
  [0x04000031, ['SURFING', 'surfing']],
  [0x04000034, ['KAYAKING', 'paddle_sports']],
  [0x0400003a, ['BOXING', 'boxing']],
  [0x0400003c, ['BASEBALL', 'baseball']],
  [0x04000045, ['HIIT', 'hiit']],
  [0x04000049, ['PADEL', 'racquetball']],
  [0x0400004a, ['SQUASH', 'squash']],
  [0x04000050, ['MEDITATION', 'mind_and_body']],
  [0x04000055, ['RUGBY', 'rugby']],
  [0x04000056, ['HOCKEY', 'hockey']],
  [0x04000058, ['VOLLEYBALL', 'volleyball']],
  [0x0400005c, ['DANCE', 'dance']],
  [0x040000e2, ['MOUNTAIN_HIKE', 'hiking']],
  [0x0400005d, ['CROSS_TRAINER', 'elliptical']],
  [0x04000062, ['CROSSFIT', 'cross_training']],
  [0x04000063, ['FUNCTIONAL_TRAINING', 'functional_strength_training']],
  [0x04000067, ['CROSS_COUNTRY_RUNNING', 'running']],
  [0x0400006a, ['CORE_TRAINING', 'core_training']],
  [0x04000089, ['TAI_CHI', 'tai_chi']],
  [0x04000091, ['STAIRS', 'stair_climbing']],
  [0x040000a8, ['CROSS_COUNTRY_SKIING', 'cross_country_skiing']],
]);

// ---------------------------------------------------------------------------------------------
// Devices and provenance

type DeviceInfo = {
  id: number;
  /** DEVICE.IDENTIFIER (MAC address), or `device-<_id>` when the row is missing. */
  identifier: string;
  name: string | null;
  manufacturer: string | null;
  type: number | null;
  typeName: string | null;
  model: string | null;
  label: string | null;
  source: string;
  kind: DeviceKind;
};

/** DEVICE.MANUFACTURER as Gadgetbridge's coordinators write it → vendor (docs/sources.md). */
const MANUFACTURER_VENDORS: readonly (readonly [RegExp, string])[] = [
  [/xiaomi|redmi/i, 'xiaomi'],
  [/huami|amazfit|zepp/i, 'zepp'],
  [/huawei/i, 'huawei'],
  [/honor/i, 'honor'],
  [/pebble/i, 'pebble'],
  [/garmin/i, 'garmin'],
  [/fossil|skagen|misfit/i, 'fossil'],
  [/withings|nokia/i, 'withings'],
  [/polar/i, 'polar'],
  [/fitbit/i, 'fitbit'],
  [/samsung/i, 'samsung'],
  [/suunto/i, 'suunto'],
  [/coros/i, 'coros'],
  [/sony/i, 'sony'],
  [/casio/i, 'casio'],
  [/espruino|bangle/i, 'banglejs'],
  [/pine64|pinetime/i, 'pine64'],
  [/colmi/i, 'colmi'],
  [/nothing|cmf/i, 'nothing'],
];

/** Huami made the Mi Bands up to 7; Gadgetbridge records them with manufacturer "Huami". */
const XIAOMI_BRANDED = /mi\s*(smart\s*)?band|miband|xiaomi|redmi/i;

function vendorOfDevice(manufacturer: string | null, name: string | null, typeName: string | null, provider: string): string {
  for (const [pattern, vendor] of MANUFACTURER_VENDORS) {
    if (manufacturer && pattern.test(manufacturer)) {
      if (vendor === 'zepp' && XIAOMI_BRANDED.test(`${name ?? ''} ${typeName ?? ''}`)) return 'xiaomi';
      return vendor;
    }
  }
  return provider;
}

/**
 * Everything that writes Gadgetbridge activity samples, sleep or workouts is worn on the body
 * (bands, watches, rings); only scales (and phones) are not. The name tells which.
 */
function deviceKindOf(name: string | null, typeName: string | null, model: string | null): DeviceKind {
  const s = `${typeName ?? ''} ${name ?? ''} ${model ?? ''}`.toLowerCase();
  if (/scale/.test(s)) return 'scale';
  if (/phone/.test(s)) return 'phone';
  if (/\bring\b|colmi_?r\d|\br0\d\b|oura/.test(s)) return 'ring';
  if (/strap|\bh10\b|tickr/.test(s)) return 'chest_strap';
  if (/band/.test(s)) return 'band';
  if (/watch|\bgtr|\bgts|t-?rex|\bbip|falcon|cheetah|balance|stratos|verge|fenix|forerunner|venu|vivo|instinct|pebble|bangle|pinetime|versa|ionic|\bgt\s?\d/.test(s)) return 'watch';
  return 'band';
}

function deviceLabel(alias: string | null, manufacturer: string | null, name: string | null): string | null {
  if (alias && alias.trim()) return alias.trim();
  if (!name) return manufacturer;
  if (!manufacturer || name.toLowerCase().startsWith(manufacturer.toLowerCase())) return name;
  return `${manufacturer} ${name}`;
}

function loadDevices(db: Database.Database, tables: Map<string, TableInfo>, provider: string): Map<number, DeviceInfo> {
  const devices = new Map<number, DeviceInfo>();
  const table = tables.get('DEVICE');
  if (!table || !table.columns.has('_id')) return devices;
  for (const row of db.prepare(`SELECT * FROM ${q('DEVICE')}`).all() as Row[]) {
    const id = intOrNull(row._id);
    if (id === null) continue;
    const name = strOrNull(row.NAME);
    const manufacturer = strOrNull(row.MANUFACTURER);
    const typeName = strOrNull(row.TYPE_NAME);
    const model = strOrNull(row.MODEL);
    devices.set(id, {
      id,
      identifier: strOrNull(row.IDENTIFIER) ?? `device-${id}`,
      name,
      manufacturer,
      type: intOrNull(row.TYPE),
      typeName,
      model,
      label: deviceLabel(strOrNull(row.ALIAS), manufacturer, name),
      source: vendorOfDevice(manufacturer, name, typeName, provider),
      kind: deviceKindOf(name, typeName, model),
    });
  }
  return devices;
}

function unknownDevice(id: number, provider: string): DeviceInfo {
  // No DEVICE row: still a wearable (only wearables write these tables), vendor unknown.
  return { id, identifier: `device-${id}`, name: null, manufacturer: null, type: null, typeName: null, model: null, label: null, source: provider, kind: 'band' };
}

function provenance(device: DeviceInfo, provider: string): Provenance {
  return { provider, source: device.source, device: device.label, body_worn: isBodyWorn(device.kind) };
}

// ---------------------------------------------------------------------------------------------
// Opening the export and reading its schema

type Row = Record<string, unknown>;
type TableInfo = { name: string; columns: Set<string>; pk: string[]; withoutRowid: boolean };

function q(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

type Opened = { db: Database.Database } | { error: string };

function openExport(payload: Buffer): Opened {
  if (payload.length === 0) return { error: 'empty upload: expected the Gadgetbridge database export (SQLite file)' };
  if (payload.length >= 4 && payload.subarray(0, 4).equals(ZIP_MAGIC)) {
    return { error: 'a ZIP archive, not the database: upload the SQLite file that Gadgetbridge\'s "Export DB" writes (named Gadgetbridge)' };
  }
  if (payload.length < 100 || !payload.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) {
    return { error: 'not a SQLite database: the upload does not start with the "SQLite format 3" header' };
  }
  // A cut-off file would fail table by table; say so once. The header's page count is valid
  // when its "version-valid-for" number equals the change counter (SQLite file format 1.3).
  const pageSize = payload.readUInt16BE(16) === 1 ? 65536 : payload.readUInt16BE(16);
  const pageCount = payload.readUInt32BE(28);
  if (pageCount > 0 && payload.readUInt32BE(92) === payload.readUInt32BE(24) && pageSize * pageCount > payload.length) {
    return { error: `truncated SQLite database: the header announces ${pageSize * pageCount} bytes, the upload has ${payload.length}` };
  }
  // Android keeps the app's database in WAL mode (header bytes 18/19 = 2). The export is the main
  // file alone, and an in-memory database cannot be opened in WAL mode: read it as a rollback-
  // journal file. The bytes are patched only while better-sqlite3 copies the buffer into SQLite.
  const wal = payload[18] === 2 || payload[19] === 2;
  const saved = [payload[18]!, payload[19]!] as const;
  let db: Database.Database;
  try {
    if (wal) {
      payload[18] = 1;
      payload[19] = 1;
    }
    db = new Database(payload, { readonly: true });
  } catch (err) {
    return { error: `unreadable SQLite database: ${messageOf(err)}` };
  } finally {
    if (wal) {
      payload[18] = saved[0];
      payload[19] = saved[1];
    }
  }
  try {
    distrust(db);
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    const refused = refusedSchema(db) ?? corruption(db);
    if (refused === null) return { db };
    db.close();
    return { error: refused };
  } catch (err) {
    db.close();
    return { error: `unreadable SQLite database: ${messageOf(err)}` };
  }
}

/**
 * The file comes from a stranger: SQLite's advice for untrusted database files, as far as
 * better-sqlite3 12 exposes it.
 *
 * - SQLITE_DBCONFIG_DEFENSIVE: better-sqlite3 switches it on when it opens a database, and its only
 *   handle on it is unsafeMode(false), which sets it again (there is no getter). Called so that
 *   the guarantee does not rest on a default that a later version or a stray unsafeMode() could change.
 * - trusted_schema = OFF: SQL stored in the file (views, triggers, generated columns, CHECK and
 *   DEFAULT expressions, expression indexes) may no longer call functions that are not marked
 *   innocuous nor use virtual tables that are not. None are registered on this connection today;
 *   this keeps it so for any that are added later.
 * - query_only = ON: on top of the read-only deserialisation, no statement can write, so no
 *   trigger in the file can ever fire.
 * - cell_size_check = ON: a b-tree cell whose sizes do not add up is reported as corruption when
 *   read, instead of being trusted.
 *
 * Not available from JavaScript: sqlite3_limit() (better-sqlite3 only lowers SQLITE_LIMIT_LENGTH
 * and SQLITE_LIMIT_SQL_LENGTH itself) and a per-connection heap limit (PRAGMA hard_heap_limit is
 * process-wide and would cap every other database of the process). mmap_size does not apply to a
 * deserialised in-memory database.
 */
function distrust(db: Database.Database): void {
  db.unsafeMode(false);
  db.pragma('trusted_schema = OFF');
  db.pragma('query_only = ON');
  db.pragma('cell_size_check = ON');
}

/**
 * Virtual tables are refused, whatever their name: greenDAO never creates one, and reading one, or
 * even checking the file's integrity (SQLite ≥ 3.44 runs the module's own xIntegrity check), runs
 * the module's code (FTS3/4/5, R*Tree, which trusted_schema allows) over shadow tables the sender
 * wrote. Views and triggers are left alone: the parser reads only what the schema lists as tables
 * (a view can never stand in for one of them: a name is a table or a view, never both), and
 * triggers only fire on writes. PRAGMA table_list tells a virtual table from the parsed schema,
 * without connecting to it, so the check cannot be fooled by how the CREATE text is spelt.
 */
function refusedSchema(db: Database.Database): string | null {
  const virtual = (db.pragma('table_list') as { schema: string; name: string; type: string }[])
    .filter((t) => t.schema === 'main' && t.type === 'virtual')
    .map((t) => t.name);
  if (!virtual.length) return null;
  return `not a Gadgetbridge export: the database declares virtual tables (${virtual.sort().join(', ')}), which the app never creates`;
}

/**
 * PRAGMA quick_check before anything is read: every page of every b-tree is walked once, so a
 * damaged file is one rejected item instead of a parse that stops halfway through a table after
 * storing its first rows (or, worse, reads garbage that still looks like rows).
 */
function corruption(db: Database.Database): string | null {
  const problems = (db.pragma('quick_check') as { quick_check: string }[]).map((r) => r.quick_check);
  if (problems.length === 1 && problems[0] === 'ok') return null;
  const said = problems
    .join('\n')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !/^\*\*\* in database \w+ \*\*\*$/.test(line));
  return truncateBytes(`corrupt SQLite database: ${said.slice(0, 5).join('; ')}`, 512);
}

function readTables(db: Database.Database): Map<string, TableInfo> {
  const tables = new Map<string, TableInfo>();
  const rows = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table'`).all() as { name: string; sql: string | null }[];
  for (const { name, sql } of rows) {
    const info = db.prepare(`PRAGMA table_info(${q(name)})`).all() as { name: string; pk: number }[];
    const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    tables.set(name, { name, columns: new Set(info.map((c) => c.name)), pk, withoutRowid: /\bWITHOUT\s+ROWID\b/i.test(sql ?? '') });
  }
  return tables;
}

function isSampleTable(t: TableInfo): boolean {
  return t.name.toUpperCase().endsWith('ACTIVITY_SAMPLE') && ['TIMESTAMP', 'DEVICE_ID', 'STEPS'].every((c) => t.columns.has(c));
}

function hasColumns(t: TableInfo | undefined, ...columns: string[]): t is TableInfo {
  return !!t && columns.every((c) => t.columns.has(c));
}

// ---------------------------------------------------------------------------------------------
// The parse

type SessionOut = { deviceId: number; start: number; end: number; record: SleepSessionRecord };

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

// ---------------------------------------------------------------------------------------------
// Activity samples

type NightPhase = { phase: SleepPhase['phase']; start: number; end: number };
type Night = {
  start: number;
  /** End of the last sleep minute. */
  lastSleepEnd: number;
  /** End of the last minute that belongs to the night (sleep or explicit awake). */
  lastEnd: number;
  phases: NightPhase[];
  hrSum: number;
  hrCount: number;
  hrMin: number | null;
  hrMax: number | null;
};
type DeviceState = { kind: KindState; night: Night | null };

function* readSampleTable(
  db: Database.Database,
  table: TableInfo,
  deviceOf: (id: number) => DeviceInfo,
  provider: string,
  nights: SessionOut[],
  maxTs: number,
): Generator<ParseItem> {
  const optional = ['USER_ID', 'RAW_INTENSITY', 'RAW_KIND', 'HEART_RATE', 'SLEEP', 'DEEP_SLEEP', 'REM_SLEEP'].filter((c) => table.columns.has(c));
  const extraKey = table.pk.filter((c) => c !== 'TIMESTAMP' && c !== 'DEVICE_ID');
  const columns = [...new Set(['TIMESTAMP', 'DEVICE_ID', 'STEPS', ...optional, ...extraKey])];
  const rowid = table.withoutRowid ? '' : 'rowid AS "__rowid", ';
  // The primary key order: no sort of a large table; devices keep separate state.
  const stmt = db.prepare(`SELECT ${rowid}${columns.map(q).join(', ')} FROM ${q(table.name)} ORDER BY "TIMESTAMP", "DEVICE_ID"`);
  const states = new Map<number, DeviceState>();

  for (const row of stmt.iterate() as IterableIterator<Row>) {
    const reason = invalidSample(row, maxTs);
    if (reason) {
      yield { rejected: rejectRow(table, row, reason) };
      continue;
    }
    const ts = row.TIMESTAMP as number;
    const deviceId = row.DEVICE_ID as number;
    const steps = row.STEPS as number;
    const hr = intOrNull(row.HEART_RATE);
    const hasHr = hr !== null && !HR_NO_READING.has(hr);
    const device = deviceOf(deviceId);
    const prov = provenance(device, provider);
    const key = `${table.name}:${device.identifier}:${ts}${extraKey.map((c) => `:${String(row[c])}`).join('')}`;

    if (steps > 0) {
      yield { record: quantity(prov, device, `${key}:step_count`, 'step_count', steps, STEP_UNIT, ts, ts + SAMPLE_SECONDS, sampleMetadata(table, row, steps, 'steps')) };
    }
    if (hasHr) {
      yield { record: quantity(prov, device, `${key}:heart_rate`, 'heart_rate', hr, HR_UNIT, ts, ts, sampleMetadata(table, row, hr, 'bpm')) };
    }

    const scheme = sleepSchemeFor(table.name, device);
    if (!scheme) continue;
    let state = states.get(deviceId);
    if (!state) states.set(deviceId, (state = { kind: { last: HUAMI.UNSET }, night: null }));
    const stage = scheme.classify(row, state.kind);
    if (stage) {
      const finished = addSleepMinute(state, ts, stage);
      if (finished) pushNight(nights, finished, table, scheme, device, provider);
      if (hasHr && stage !== 'awake' && state.night) addNightHeartRate(state.night, hr);
    }
  }
  for (const [deviceId, state] of states) {
    if (state.night) pushNight(nights, state.night, table, sleepSchemeFor(table.name, deviceOf(deviceId))!, deviceOf(deviceId), provider);
  }
}

function invalidSample(row: Row, maxTs: number): string | null {
  const ts = row.TIMESTAMP;
  if (!isInt(ts)) return `TIMESTAMP ${JSON.stringify(ts)} is not an integer`;
  if (ts < MIN_EPOCH_S || ts > maxTs) return `TIMESTAMP ${ts} (${isoOrRaw(ts)}) is outside ${isoOf(MIN_EPOCH_S)} .. one day after the upload`;
  if (!isInt(row.DEVICE_ID)) return `DEVICE_ID ${JSON.stringify(row.DEVICE_ID)} is not an integer`;
  const steps = row.STEPS;
  if (!isInt(steps)) return `STEPS ${JSON.stringify(steps)} is not an integer`;
  if (steps < 0) return `STEPS ${steps} is negative`;
  if (steps > MAX_STEPS_PER_SAMPLE) return `STEPS ${steps} in one minute is implausible (more than ${MAX_STEPS_PER_SAMPLE})`;
  if ('HEART_RATE' in row && row.HEART_RATE !== null) {
    const hr = row.HEART_RATE;
    if (!isInt(hr)) return `HEART_RATE ${JSON.stringify(hr)} is not an integer`;
    if (!HR_NO_READING.has(hr) && (hr < HR_MIN || hr > HR_MAX)) return `HEART_RATE ${hr} is out of range (${HR_MIN}..${HR_MAX}; -1, 0 and 255 mean no reading)`;
  }
  return null;
}

function sampleMetadata(table: TableInfo, row: Row, value: number, unit: string): Metadata {
  const metadata: Metadata = {
    timezone: null,
    table: table.name,
    raw_kind: intOrNull(row.RAW_KIND),
    raw_intensity: intOrNull(row.RAW_INTENSITY),
    gadgetbridge_device_id: row.DEVICE_ID,
    gadgetbridge_user_id: intOrNull(row.USER_ID),
    original_value: value,
    original_unit: unit,
  };
  for (const c of ['SLEEP', 'DEEP_SLEEP', 'REM_SLEEP'] as const) {
    if (c in row) metadata[c.toLowerCase()] = intOrNull(row[c]);
  }
  return metadata;
}

function quantity(prov: Provenance, device: DeviceInfo, externalId: string, type: string, value: number, unit: string, start: number, end: number, metadata: Metadata): QuantityRecord {
  return {
    ...prov,
    kind: 'quantity',
    external_id: externalId,
    type,
    value,
    unit,
    start_date: isoOf(start),
    end_date: isoOf(end),
    source_name: 'Gadgetbridge',
    source_bundle_id: null,
    device_model: device.model ?? device.name,
    product_type: device.typeName,
    was_user_entered: false,
    metadata,
  };
}

// ---------------------------------------------------------------------------------------------
// Nights from sleep minutes

/** Adds one sleep-kind minute; answers the night it closed, if the minute starts a new one. */
function addSleepMinute(state: DeviceState, t: number, stage: Stage): Night | null {
  let finished: Night | null = null;
  let night = state.night;
  if (night && t - night.lastEnd >= NIGHT_GAP_S) {
    finished = night;
    night = state.night = null;
  }
  if (!night) {
    if (stage === 'awake') return finished; // a night starts with sleep
    night = state.night = { start: t, lastSleepEnd: t, lastEnd: t, phases: [], hrSum: 0, hrCount: 0, hrMin: null, hrMax: null };
  } else if (t > night.lastEnd) {
    // Minutes of other kinds (or missing minutes) inside the night: awake.
    pushPhase(night.phases, 'awake', night.lastEnd, t);
  }
  pushPhase(night.phases, stage, t, t + SAMPLE_SECONDS);
  night.lastEnd = Math.max(night.lastEnd, t + SAMPLE_SECONDS);
  if (stage !== 'awake') night.lastSleepEnd = Math.max(night.lastSleepEnd, t + SAMPLE_SECONDS);
  return finished;
}

function addNightHeartRate(night: Night, hr: number) {
  night.hrSum += hr;
  night.hrCount += 1;
  night.hrMin = night.hrMin === null ? hr : Math.min(night.hrMin, hr);
  night.hrMax = night.hrMax === null ? hr : Math.max(night.hrMax, hr);
}

function pushPhase(phases: NightPhase[], phase: SleepPhase['phase'], start: number, end: number) {
  const last = phases[phases.length - 1];
  if (last && start < last.end) start = last.end;
  if (end <= start) return;
  if (last && last.phase === phase && last.end === start) last.end = end;
  else phases.push({ phase, start, end });
}

function pushNight(out: SessionOut[], night: Night, table: TableInfo, scheme: SleepScheme, device: DeviceInfo, provider: string) {
  const phases = night.phases
    .filter((p) => p.start < night.lastSleepEnd)
    .map((p) => ({ ...p, end: Math.min(p.end, night.lastSleepEnd) }));
  const totals = phaseTotals(phases);
  if (totals.deep + totals.rem + totals.light + totals.asleep < MIN_SLEEP_S) return;
  const metadata: Metadata = {
    timezone: null,
    table: table.name,
    method: 'raw_kind',
    raw_kind_scheme: scheme.name,
    gadgetbridge_device_id: device.id,
    avg_heart_rate: night.hrCount ? round1(night.hrSum / night.hrCount) : null,
    min_heart_rate: night.hrMin,
    max_heart_rate: night.hrMax,
  };
  out.push({
    deviceId: device.id,
    start: night.start,
    end: night.lastSleepEnd,
    record: sleepSession(provenance(device, provider), `sleep:${device.identifier}:${night.start}`, night.start, night.lastSleepEnd, phases, totals, metadata),
  });
}

type Totals = { deep: number; rem: number; light: number; awake: number; asleep: number; in_bed: number };

function phaseTotals(phases: NightPhase[]): Totals {
  const totals: Totals = { deep: 0, rem: 0, light: 0, awake: 0, asleep: 0, in_bed: 0 };
  for (const p of phases) totals[p.phase] += p.end - p.start;
  return totals;
}

function sleepSession(prov: Provenance, externalId: string, start: number, end: number, phases: NightPhase[], totals: Totals, metadata: Metadata, total?: number): SleepSessionRecord {
  return {
    ...prov,
    kind: 'sleep_session',
    external_id: externalId,
    bedtime_start: isoOf(start),
    bedtime_end: isoOf(end),
    total_sleep_seconds: total ?? totals.deep + totals.rem + totals.light + totals.asleep,
    deep_sleep_seconds: totals.deep,
    rem_sleep_seconds: totals.rem,
    light_sleep_seconds: totals.light,
    awake_seconds: totals.awake,
    sleep_score: null,
    hrv_avg_ms: null,
    resting_hr: null,
    respiratory_rate: null,
    spo2_avg: null,
    phases: phases.map((p) => ({ phase: p.phase, start_date: isoOf(p.start), end_date: isoOf(p.end) })),
    metadata,
  };
}

/** Sessions the band computed win over nights rebuilt from raw kinds of the same device. */
function mergeSleep(nights: SessionOut[], tableSessions: SessionOut[]): SleepSessionRecord[] {
  const kept = nights.filter(
    (n) =>
      !tableSessions.some((s) => {
        if (s.deviceId !== n.deviceId) return false;
        const overlap = Math.min(s.end, n.end) - Math.max(s.start, n.start);
        return overlap > 0 && overlap * 2 >= Math.min(s.end - s.start, n.end - n.start);
      }),
  );
  return [...kept, ...tableSessions]
    .sort((a, b) => a.start - b.start || a.deviceId - b.deviceId)
    .map((s) => s.record);
}

// ---------------------------------------------------------------------------------------------
// Xiaomi sleep tables (timestamps in milliseconds)

function* readXiaomiSleep(
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
    const totals: Totals = {
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

// ---------------------------------------------------------------------------------------------
// Workouts

function* readWorkouts(
  db: Database.Database,
  table: TableInfo,
  sampleTables: TableInfo[],
  deviceOf: (id: number) => DeviceInfo,
  provider: string,
  maxTs: number,
): Generator<ParseItem> {
  const wanted = ['_id', 'NAME', 'START_TIME', 'END_TIME', 'ACTIVITY_KIND', 'GPX_TRACK', 'RAW_DETAILS_PATH', 'DEVICE_ID', 'USER_ID', 'SUMMARY_DATA', 'BASE_LONGITUDE', 'BASE_LATITUDE', 'BASE_ALTITUDE'];
  const columns = wanted.filter((c) => table.columns.has(c));
  // Workouts are few; read them all so the fallback queries below can run (better-sqlite3
  // cannot run a statement while another one iterates). RAW_SUMMARY_DATA (a blob) is left out.
  const rows = db.prepare(`SELECT ${columns.map(q).join(', ')} FROM ${q(table.name)} ORDER BY "_id"`).all() as Row[];
  const fallbacks = sampleTables.map((t) => sampleStatsStatement(db, t));

  for (const row of rows) {
    const start = row.START_TIME;
    const end = row.END_TIME;
    let reason: string | null = null;
    if (!isInt(start) || !isInt(end)) reason = 'START_TIME and END_TIME must be integers (epoch milliseconds)';
    else if (start / 1000 < MIN_EPOCH_S || end / 1000 > maxTs) reason = `workout ${isoOrRaw(start / 1000)} .. ${isoOrRaw(end / 1000)} is outside ${isoOf(MIN_EPOCH_S)} .. one day after the upload`;
    else if (end < start) reason = `END_TIME ${end} is before START_TIME ${start}`;
    else if ((end - start) / 1000 > MAX_WORKOUT_S) reason = `workout of ${Math.round((end - start) / 86400000)} days is implausible (more than 7)`;
    else if (!isInt(row.DEVICE_ID)) reason = `DEVICE_ID ${JSON.stringify(row.DEVICE_ID)} is not an integer`;
    if (reason) {
      yield { rejected: rejectRow(table, { __rowid: row._id, ...row }, reason) };
      continue;
    }
    const startMs = start as number;
    const endMs = end as number;
    const device = deviceOf(row.DEVICE_ID as number);
    const kindCode = intOrNull(row.ACTIVITY_KIND);
    const kind = kindCode === null ? undefined : WORKOUT_TYPES.get(kindCode);

    let summaryData: Record<string, unknown> | null = null;
    let summaryError: string | null = null;
    if (typeof row.SUMMARY_DATA === 'string' && row.SUMMARY_DATA.trim()) {
      try {
        const parsed: unknown = JSON.parse(row.SUMMARY_DATA);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) summaryData = parsed as Record<string, unknown>;
        else summaryError = 'SUMMARY_DATA is not a JSON object';
      } catch {
        summaryError = 'SUMMARY_DATA is not valid JSON';
      }
    }

    let distance = summaryValue(summaryData, 'distanceMeters', { meters: 1, m: 1, km: 1000, cm: 0.01 });
    let energy = summaryValue(summaryData, 'caloriesBurnt', { calories_unit: 1, kcal: 1, unit_joule: 1 / 4184 });
    let avgHr = summaryValue(summaryData, 'averageHR', { bpm: 1 });
    let maxHr = summaryValue(summaryData, 'maxHR', { bpm: 1 });
    let steps = summaryValue(summaryData, 'steps', { steps_unit: 1 });
    const derived: string[] = [];
    if (avgHr === null || maxHr === null || steps === null) {
      const stats = sampleStats(fallbacks, device.id, Math.floor(startMs / 1000), Math.ceil(endMs / 1000));
      if (stats) {
        if (steps === null) {
          steps = stats.steps;
          derived.push('steps');
        }
        if (avgHr === null && stats.avgHr !== null) {
          avgHr = round1(stats.avgHr);
          derived.push('avg_heart_rate');
        }
        if (maxHr === null && stats.maxHr !== null) {
          maxHr = stats.maxHr;
          derived.push('max_heart_rate');
        }
      }
    }
    if (distance !== null) distance = round1(distance);
    if (energy !== null) energy = round1(energy);

    const metadata: Metadata = {
      timezone: null,
      table: table.name,
      gadgetbridge_id: row._id,
      name: strOrNull(row.NAME),
      activity_kind: kindCode,
      activity_kind_name: kind?.[0] ?? null,
      gpx_track: strOrNull(row.GPX_TRACK),
      raw_details_path: strOrNull(row.RAW_DETAILS_PATH),
      active_seconds: summaryValue(summaryData, 'activeSeconds', { seconds: 1 }),
      summary_data: summaryData,
      gadgetbridge_device_id: device.id,
      gadgetbridge_user_id: intOrNull(row.USER_ID),
    };
    if (summaryError) metadata.summary_data_error = summaryError;
    if (derived.length) metadata.derived_from_samples = derived;

    const workout: WorkoutRecord = {
      ...provenance(device, provider),
      kind: 'workout',
      // Not the local _id: a reinstalled Gadgetbridge numbers its workouts again from 1.
      external_id: `workout:${device.identifier}:${startMs}`,
      type: kind?.[1] ?? 'other',
      start_date: new Date(startMs).toISOString(),
      end_date: new Date(endMs).toISOString(),
      duration_s: (endMs - startMs) / 1000,
      active_energy_kcal: energy,
      distance_m: distance,
      avg_heart_rate: avgHr,
      max_heart_rate: maxHr,
      steps,
      // GPX_TRACK names a file on the phone; the database export does not contain it.
      route: [],
      metadata,
    };
    yield { record: workout };
  }
}

/** A SUMMARY_DATA entry: `{"value": 5230, "unit": "meters"}` (or a bare number), converted. */
export function summaryValue(data: Record<string, unknown> | null, key: string, units: Record<string, number>): number | null {
  // Own properties only: a stranger's summary may name keys like "constructor".
  const entry = data && Object.hasOwn(data, key) ? data[key] : undefined;
  let value: unknown = entry;
  let unit: unknown;
  if (entry && typeof entry === 'object') {
    value = (entry as Record<string, unknown>).value;
    unit = (entry as Record<string, unknown>).unit;
  }
  if (typeof value === 'string' && value.trim() !== '') value = Number(value);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return null;
  if (typeof unit === 'string' && unit !== '') {
    const factor = Object.hasOwn(units, unit) ? units[unit] : undefined;
    return typeof factor === 'number' ? value * factor : null;
  }
  return value;
}

type Stats = { n: number; steps: number; avgHr: number | null; maxHr: number | null };

function sampleStatsStatement(db: Database.Database, table: TableInfo) {
  const hr = table.columns.has('HEART_RATE');
  const validHr = `"HEART_RATE" BETWEEN ${HR_MIN} AND ${HR_MAX} AND "HEART_RATE" NOT IN (${[...HR_NO_READING].join(', ')})`;
  return db.prepare(
    `SELECT count(*) AS n,
            coalesce(sum(CASE WHEN "STEPS" > 0 AND "STEPS" <= ${MAX_STEPS_PER_SAMPLE} THEN "STEPS" END), 0) AS steps,
            ${hr ? `avg(CASE WHEN ${validHr} THEN "HEART_RATE" END)` : 'NULL'} AS avgHr,
            ${hr ? `max(CASE WHEN ${validHr} THEN "HEART_RATE" END)` : 'NULL'} AS maxHr
       FROM ${q(table.name)} WHERE "DEVICE_ID" = ? AND "TIMESTAMP" >= ? AND "TIMESTAMP" < ?`,
  );
}

/** Steps and heart rate of the device's minutes during a workout without them in SUMMARY_DATA. */
function sampleStats(statements: Database.Statement[], deviceId: number, start: number, end: number): Stats | null {
  for (const stmt of statements) {
    const stats = stmt.get(deviceId, start, end) as Stats;
    if (stats.n > 0) return stats;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

function intOrNull(v: unknown): number | null {
  return isInt(v) ? v : null;
}

function strOrNull(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}

function isoOf(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString();
}

function isoOrRaw(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  return Number.isNaN(d.getTime()) ? String(epochSeconds) : d.toISOString();
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function rejectRow(table: TableInfo, row: Row, reason: string): RejectedItem {
  const { __rowid, ...values } = row;
  let location: string;
  if (__rowid !== undefined && __rowid !== null) location = `${table.name}:${String(__rowid)}`;
  else {
    const key = table.pk.length ? table.pk : ['TIMESTAMP', 'DEVICE_ID'];
    location = `${table.name}:${key.map((c) => `${c}=${String(values[c])}`).join(',')}`;
  }
  return { location, reason, excerpt: rowExcerpt(values) };
}

function rowExcerpt(row: Row): string {
  const plain: Row = {};
  for (const [k, v] of Object.entries(row)) {
    plain[k] = Buffer.isBuffer(v) ? `<blob ${v.length} bytes>` : typeof v === 'bigint' ? v.toString() : v;
  }
  return truncateBytes(JSON.stringify(plain));
}

function printableExcerpt(payload: Buffer): string {
  return truncateBytes(payload.subarray(0, 256).toString('latin1').replace(/[^\x20-\x7e]/g, '.'));
}

function truncateBytes(s: string, max = EXCERPT_BYTES): string {
  const b = Buffer.from(s, 'utf8');
  if (b.length <= max) return s;
  // Cut on a character boundary.
  let end = max;
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--;
  return b.subarray(0, end).toString('utf8');
}
