import type { ParseContext, ParseItem } from '../../../../commands/ingestion/records.js';
import { isObject } from '../../shared/recordError.js';
import type { ByteSource, ImportDecoder } from '../importSource.js';
import { csvTable } from '../exportShared/csvTable.js';
import { uploaderZone } from '../exportShared/exportClock.js';
import { jsonArrayItems } from '../exportShared/jsonArrayItems.js';
import { namedZone } from '../exportShared/localClock.js';
import { UnreadableExportError } from '../exportShared/unreadableExport.js';
import { entriesListed, notAZip, openZipArchive, type ArchiveEntry, type ZipArchive } from '../exportShared/zipArchive.js';
import { dailyCsvColumns, dailyCsvDecoder } from './decodeDailyCsv.js';
import { exerciseDecoder, sleepDecoder, weightDecoder, type SleepScore } from './decodeLogs.js';
import { heightOf, seriesDecoder } from './decodeSeries.js';
import { asItems, csvFile, jsonFile, provenanceOf } from './fitbitRecords.js';
import { dateOf, TakeoutClock, usDateTime } from './takeoutClock.js';
import { classify, type ClassifiedEntry } from './takeoutLayout.js';

/**
 * fitbit-takeout (contracts §13): a Google Takeout zip of Fitbit data (or Fitbit's older account
 * export), in the JSON layout (`Global Export Data/*.json`, per day or month and type), the newer
 * CSV layout (`Heart Rate Variability/`, `Oxygen Saturation (SpO2)/`, `Sleep Score/`, …) or both.
 * Every entry is read in place from the zip, file by file, element by element or row by row.
 * Files, times, units and ids: docs/formats/fitbit-takeout.md.
 */

export const FITBIT_TAKEOUT_SLUG = 'fitbit-takeout';
const WHAT = 'a Google Takeout zip of Fitbit data';

export function fitbitTakeoutSniff(head: Buffer): string | null {
  return notAZip(head, WHAT);
}

export const fitbitTakeoutDecoder: ImportDecoder = {
  slug: FITBIT_TAKEOUT_SLUG,
  sniff: fitbitTakeoutSniff,
  decode: (source, ctx) => decodeTakeout(source, ctx),
};

/** Sleep scores kept to join their sleep logs (a night a day for 270 years). */
const MAX_SLEEP_SCORES = 100_000;

async function* decodeTakeout(source: ByteSource, ctx: ParseContext): AsyncGenerator<ParseItem> {
  const archive = await openZipArchive(source, WHAT);
  try {
    const { files, otherFitbitFiles } = classify(archive.entries);
    if (files.length === 0 && otherFitbitFiles === 0) {
      throw new UnreadableExportError('archive', `not a Fitbit export: the archive holds none of Fitbit's files (Global Export Data/heart_rate-YYYY-MM-DD.json, sleep-….json, Daily SpO2 - ….csv, …); it holds ${entriesListed(archive.entries)}`);
    }
    const clock = await takeoutClock(archive, files, ctx);
    const height = await latestHeight(archive, files);
    const scores = await sleepScores(archive, files);
    const c = { p: provenanceOf(ctx.provider), clock };
    const sleep = sleepDecoder(c, scores);
    for (const { entry, kind } of files) {
      if (kind === 'profile') continue;
      const series = seriesDecoder(kind, c);
      if (series) {
        yield* jsonFile(archive, entry, asItems(series));
        continue;
      }
      const columns = dailyCsvColumns(kind);
      const row = dailyCsvDecoder(kind, c);
      if (columns && row) {
        yield* csvFile(archive, entry, columns, row);
        continue;
      }
      if (kind === 'weight') yield* jsonFile(archive, entry, asItems(weightDecoder(c, () => height)));
      else if (kind === 'exercise') yield* jsonFile(archive, entry, asItems(exerciseDecoder(c)));
      else if (kind === 'sleep') yield* jsonFile(archive, entry, sleep);
    }
  } finally {
    archive.close();
  }
}

/** The zone local times are read in: the upload's `tz`, else the profile's `timezone`, else UTC. */
async function takeoutClock(archive: ZipArchive, files: readonly ClassifiedEntry[], ctx: ParseContext): Promise<TakeoutClock> {
  const named = uploaderZone(ctx);
  if (named) return new TakeoutClock(named, 'upload');
  const profile = files.find((f) => f.kind === 'profile');
  if (profile) {
    const zone = namedZone(await firstValue(archive, profile.entry, 'timezone'));
    if (zone) return new TakeoutClock(zone, 'profile');
  }
  return TakeoutClock.utc();
}

async function firstValue(archive: ZipArchive, entry: ArchiveEntry, column: string): Promise<string | null> {
  const input = await archive.open(entry).catch(() => null);
  if (!input) return null;
  try {
    for await (const item of csvTable(input)) if ('values' in item) return item.values[column] ?? null;
  } catch {
    // An unreadable profile is a profile without a zone.
  } finally {
    input.destroy();
  }
  return null;
}

/** The most recent height the export states (height-*.json, millimetres), for weight units. */
async function latestHeight(archive: ZipArchive, files: readonly ClassifiedEntry[]): Promise<number | null> {
  let best: { date: string; metres: number } | null = null;
  for (const { entry } of files.filter((f) => f.kind === 'height')) {
    const input = await archive.open(entry).catch(() => null);
    if (!input) continue;
    try {
      for await (const { value } of jsonArrayItems(input)) {
        if (!isObject(value)) continue;
        try {
          const date = dateOf(usDateTime(value.dateTime, 'dateTime'));
          const metres = heightOf(value);
          if (metres !== null && (!best || date >= best.date)) best = { date, metres };
        } catch {
          // Reported when the file is decoded.
        }
      }
    } catch {
      // Reported when the file is decoded.
    } finally {
      input.destroy();
    }
  }
  return best?.metres ?? null;
}

/** Scores by sleep log id, from sleep_score.csv, to set on the sleep sessions they score. */
async function sleepScores(archive: ZipArchive, files: readonly ClassifiedEntry[]): Promise<Map<string, SleepScore>> {
  const scores = new Map<string, SleepScore>();
  for (const { entry } of files.filter((f) => f.kind === 'sleep_score')) {
    const input = await archive.open(entry).catch(() => null);
    if (!input) continue;
    try {
      for await (const item of csvTable(input)) {
        if (!('values' in item) || scores.size >= MAX_SLEEP_SCORES) continue;
        const id = item.values.sleep_log_entry_id;
        const overall = Number(item.values.overall_score);
        if (id && /^\d+$/.test(id) && Number.isFinite(overall) && overall > 0 && overall <= 100) scores.set(id, { overall });
      }
    } catch {
      // Reported when the file is decoded.
    } finally {
      input.destroy();
    }
  }
  return scores;
}
