import type { NormalizedRecord, ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { RecordError } from '../../shared/recordError.js';
import type { ByteSource, ImportDecoder } from '../importSource.js';
import { rejectedItem, UnreadableExportError } from '../exportShared/unreadableExport.js';
import { entriesListed, notAZip, openZipArchive, type ArchiveEntry, type ZipArchive } from '../exportShared/zipArchive.js';
import { dailySteps, DAILY_STEP_TYPES } from './dailySteps.js';
import { decodeExercise, EXERCISE_TYPES } from './exercises.js';
import { BLOOD_PRESSURE_TYPES, decodeBloodPressure, decodeMeasurement, MEASUREMENTS } from './measurements.js';
import { Devices } from './samsungDevices.js';
import { dataTypeOf, isRow, rowCommon, rowExcerpt, rowLocation, samsungRows } from './samsungFiles.js';
import { SLEEP_STAGE_TYPES, SLEEP_TYPES, sleepSessions } from './sleepSessions.js';

/**
 * samsung-health (contracts §13): the CSV files of Samsung Health's "Download personal data",
 * zipped. Each data file is read row by row in place from the zip. Files, columns, times and ids:
 * docs/formats/samsung-health.md.
 */

export const SAMSUNG_HEALTH_SLUG = 'samsung-health';
const WHAT = 'a zip of the CSV files Samsung Health\'s "Download personal data" writes';
const DEVICE_PROFILE = 'com.samsung.health.device_profile';

export function samsungHealthSniff(head: Buffer): string | null {
  return notAZip(head, WHAT);
}

export const samsungHealthDecoder: ImportDecoder = {
  slug: SAMSUNG_HEALTH_SLUG,
  sniff: samsungHealthSniff,
  decode: (source, ctx) => decodeSamsung(source, ctx),
};

type DataFile = { entry: ArchiveEntry; dataType: string };

async function* decodeSamsung(source: ByteSource, ctx: ParseContext): AsyncGenerator<ParseItem> {
  const archive = await openZipArchive(source, WHAT);
  try {
    const files: DataFile[] = [];
    for (const entry of archive.entries) {
      const dataType = dataTypeOf(entry);
      if (dataType) files.push({ entry, dataType });
    }
    if (files.length === 0) {
      throw new UnreadableExportError('archive', `not a Samsung Health export: the archive holds no com.samsung.*.csv data file; it holds ${entriesListed(archive.entries)}`);
    }
    const of = (types: ReadonlySet<string>) => files.filter((f) => types.has(f.dataType));
    const devices = await Devices.read(archive, files.filter((f) => f.dataType === DEVICE_PROFILE).map((f) => f.entry));

    for (const file of files) {
      const spec = MEASUREMENTS.get(file.dataType);
      if (spec) yield* eachRow(archive, file, ctx.provider, devices, (v, c) => decodeMeasurement(spec, v, c));
      else if (BLOOD_PRESSURE_TYPES.has(file.dataType)) yield* eachRow(archive, file, ctx.provider, devices, decodeBloodPressure);
      else if (EXERCISE_TYPES.has(file.dataType)) yield* eachRow(archive, file, ctx.provider, devices, decodeExercise);
    }
    yield* sleepSessions(archive, of(SLEEP_TYPES), of(SLEEP_STAGE_TYPES), ctx.provider, devices);
    yield* dailySteps(archive, of(DAILY_STEP_TYPES), ctx.provider, devices);
  } finally {
    archive.close();
  }
}

async function* eachRow(
  archive: ZipArchive,
  { entry, dataType }: DataFile,
  provider: string,
  devices: Devices,
  decode: (values: Record<string, string | undefined>, c: ReturnType<typeof rowCommon>) => NormalizedRecord[],
): AsyncGenerator<ParseItem> {
  for await (const item of samsungRows(archive, entry)) {
    if (!isRow(item)) {
      yield item;
      continue;
    }
    let records: NormalizedRecord[];
    try {
      records = decode(item.values, rowCommon(item.values, dataType, provider, devices));
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      yield rejectedItem(rowLocation(entry, item.line), err.message, rowExcerpt(item.values));
      continue;
    }
    for (const record of records) yield { record };
  }
}
